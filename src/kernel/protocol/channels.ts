/**
 * The kernel's five ZeroMQ channels, bound on the connection file's ports, and the session that
 * signs what goes out (the kernel side of jupyter_client's Session):
 *
 * | channel | socket | carries |
 * | --- | --- | --- |
 * | shell | ROUTER | requests of the front ends, one at a time (shell.ts queues them) |
 * | control | ROUTER | shutdown, interrupt, kernel_info: read while a cell runs |
 * | iopub | PUB | status, execute_input, outputs; topic `kernel.<session>.<msg_type>` |
 * | stdin | ROUTER | input_request to the front end that sent the execute_request, input_reply back |
 * | hb | REP | echoes every frame, from a thread of its own (heartbeat.ts) |
 *
 * A message is handed to ZeroMQ when it is sent (PUB and ROUTER sockets take it at once), so the
 * output of a cell's synchronous code reaches the front end while that code still runs; should a
 * socket not take a message at once, later sends on it wait their turn, so an output never overtakes
 * the `idle` status that follows it. Messages that fail to decode (bad signature, broken
 * frames) are dropped with a line on the kernel's stderr, never handled.
 */
import { randomUUID } from "node:crypto";
import { Publisher, Router } from "zeromq";
import { startHeartbeat, type Heartbeat } from "./heartbeat.js";
import { address, type Channel, type ConnectionInfo } from "./connection.js";
import { WireError, decode, encode, header, type Message } from "./wire.js";

export type RequestChannel = "shell" | "control" | "stdin";
export type SendChannel = RequestChannel | "iopub";

interface Sockets {
  shell: Router;
  control: Router;
  stdin: Router;
  iopub: Publisher;
}

/** How long a closing socket keeps trying to deliver what is queued (the last replies and idle). */
const LINGER_MS = 1000;

export class KernelChannels {
  /** This kernel's session id (every header it sends carries it). */
  readonly session = randomUUID();
  readonly #sockets: Sockets;
  /** The last send of a socket not yet taken by ZeroMQ; later sends wait for it (order). */
  readonly #pending = new Map<SendChannel, Promise<void>>();
  #closed = false;

  private constructor(
    readonly info: ConnectionInfo,
    sockets: Sockets,
    readonly heartbeat: Heartbeat,
    /** Where dropped messages and send failures are reported (the kernel's stderr). */
    readonly log: (line: string) => void,
  ) {
    this.#sockets = sockets;
  }

  /**
   * Binds the five sockets and starts the heartbeat.
   *
   * @example
   * const channels = await KernelChannels.open(readConnection(file));
   */
  static async open(info: ConnectionInfo, log: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): Promise<KernelChannels> {
    const sockets: Sockets = { shell: new Router(), control: new Router(), stdin: new Router(), iopub: new Publisher() };
    for (const s of Object.values(sockets)) s.linger = LINGER_MS;
    const heartbeat = startHeartbeat(address(info, "hb"));
    // The heartbeat's thread comes up beside the answers (kernel_info does not wait for it).
    heartbeat.ready.catch((error: unknown) => log(`rbp kernel: ${(error as Error).message}`));
    await Promise.all(Object.entries(sockets).map(([name, s]) => (s as Router).bind(address(info, name as Channel))));
    return new KernelChannels(info, sockets, heartbeat, log);
  }

  /**
   * Calls `handle` with every message that arrives on a request channel, in order, until the
   * channels close. `handle` is not awaited: the caller queues what must wait.
   */
  listen(channel: RequestChannel, handle: (message: Message) => void): void {
    const socket = this.#sockets[channel];
    void (async () => {
      try {
        for await (const frames of socket) {
          let message: Message;
          try {
            message = decode(frames as Buffer[], this.info.key);
          } catch (error) {
            if (!(error instanceof WireError)) throw error;
            this.log(`rbp kernel: dropped a message on ${channel}: ${error.message}`);
            continue;
          }
          handle(message);
        }
      } catch (error) {
        if (!this.#closed) this.log(`rbp kernel: the ${channel} channel stopped: ${(error as Error).message}`);
      }
    })();
  }

  /**
   * Sends a message. On shell, control and stdin it goes to the identities of `parent` (the
   * request it answers); on iopub to every subscriber. Returns when ZeroMQ has it queued.
   *
   * @example
   * await channels.send("iopub", "status", { execution_state: "idle" }, request);
   */
  send(channel: SendChannel, msgType: string, content: unknown, parent?: Message, metadata: Record<string, unknown> = {}): Promise<void> {
    const message = { header: header(msgType, this.session), parent_header: parent?.header ?? {}, metadata, content };
    const identities = channel === "iopub" ? [Buffer.from(`kernel.${this.session}.${msgType}`)] : (parent?.identities ?? []);
    const frames = encode(message, this.info.key, identities);
    const socket = this.#sockets[channel];
    const report = (error: unknown) => {
      if (!this.#closed) this.log(`rbp kernel: could not send ${msgType} on ${channel}: ${(error as Error).message}`);
    };
    const previous = this.#pending.get(channel);
    let sent: Promise<void>;
    if (previous === undefined) {
      // Handed to ZeroMQ now (its I/O thread delivers it even while a cell's synchronous code runs).
      sent = this.#closed ? Promise.resolve() : socket.send(frames).catch(report);
    } else {
      sent = previous.then(() => (this.#closed ? undefined : socket.send(frames).catch(report)));
    }
    this.#pending.set(channel, sent);
    void sent.then(() => {
      if (this.#pending.get(channel) === sent) this.#pending.delete(channel);
    });
    return sent;
  }

  /** Waits until everything sent so far is queued in ZeroMQ. */
  async flush(): Promise<void> {
    await Promise.all(this.#pending.values());
  }

  /** Closes the sockets (what is queued is delivered for up to a second, the sockets' linger). */
  async close(): Promise<void> {
    if (this.#closed) return;
    await this.flush();
    this.#closed = true;
    for (const s of Object.values(this.#sockets)) s.close();
    await this.heartbeat.stop();
  }
}
