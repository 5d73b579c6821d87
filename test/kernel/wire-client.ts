/**
 * A minimal Jupyter client for the kernel tests: starts `node dist/kernel/main.js` on a connection
 * file of its own and speaks the wire protocol (HMAC-SHA256 signed frames) over the ZeroMQ
 * binding tslab itself uses, so the protocol tests need neither Python nor Jupyter.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHmac, randomBytes, randomUUID } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { dirname, join } from "node:path";

export interface Message {
  header: { msg_id: string; msg_type: string; [k: string]: unknown };
  parent_header: { msg_id?: string; [k: string]: unknown };
  metadata: Record<string, unknown>;
  content: Record<string, any>;
}

interface Socket {
  connect(address: string): void;
  close(): void;
  send(frames: Array<string | Buffer>): Promise<void>;
  receive(): Promise<Buffer[]>;
}
interface Zmq {
  Dealer: new () => Socket;
  Subscriber: new () => Socket & { subscribe(): void };
}

// The zeromq binding tslab loads (tslab's own dependency), resolved from tslab.
const tslabRequire = createRequire(createRequire(import.meta.url).resolve("tslab/package.json"));
const zmq = tslabRequire("zeromq") as Zmq;

const DELIM = "<IDS|MSG>";

async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<ReturnType<typeof createServer>>((resolve) => {
          const s = createServer();
          s.listen(0, "127.0.0.1", () => resolve(s));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as { port: number }).port);
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

function parse(frames: Buffer[]): Message {
  const i = frames.findIndex((f) => f.toString() === DELIM);
  const [header, parent, metadata, content] = frames.slice(i + 2, i + 6).map((f) => JSON.parse(f.toString()));
  return { header, parent_header: parent, metadata, content };
}

export interface ExecuteResult {
  reply: Record<string, any>;
  /** The iopub messages of the request, without status and execute_input. */
  outputs: Message[];
}

export class KernelClient {
  readonly stderr: string[] = [];
  readonly #iopubMessages: Message[] = [];
  #waiters: Array<() => void> = [];
  #closed = false;

  private constructor(
    readonly process: ChildProcess,
    readonly key: string,
    readonly session: string,
    readonly shell: Socket,
    readonly iopub: Socket & { subscribe(): void },
  ) {}

  /** Starts the kernel in `cwd` and waits until it answers on shell and publishes on iopub. */
  static async start(options: { main: string; dir: string; cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<KernelClient> {
    const [shell_port, iopub_port, stdin_port, control_port, hb_port] = await freePorts(5);
    const key = randomBytes(16).toString("hex");
    const file = join(options.dir, `kernel-${randomUUID()}.json`);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(
      file,
      JSON.stringify({ transport: "tcp", ip: "127.0.0.1", shell_port, iopub_port, stdin_port, control_port, hb_port, key, signature_scheme: "hmac-sha256" }),
    );
    const child = spawn(process.execPath, [options.main, "--config-path", file], { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", "pipe"] });
    const shell = new zmq.Dealer();
    const iopub = new zmq.Subscriber();
    const client = new KernelClient(child, key, randomUUID(), shell, iopub);
    child.stderr!.setEncoding("utf8").on("data", (s: string) => client.stderr.push(s));
    child.stdout!.resume();
    shell.connect(`tcp://127.0.0.1:${shell_port}`);
    iopub.connect(`tcp://127.0.0.1:${iopub_port}`);
    iopub.subscribe();
    void client.#readIopub();
    // A subscriber misses what is published before it is connected: ask for kernel_info until an
    // iopub status for one of the requests arrives.
    const deadline = Date.now() + (options.timeoutMs ?? 60_000);
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the kernel exited (${child.exitCode}): ${client.stderr.join("")}`);
      const id = await client.#send("kernel_info_request", {});
      await client.#receiveReply(id, Math.max(1, deadline - Date.now()));
      const seen = await client.#waitFor(() => client.#iopubMessages.some((m) => m.parent_header.msg_id === id), 500);
      if (seen) break;
      if (Date.now() > deadline) throw new Error("the kernel's iopub channel never answered");
    }
    client.#iopubMessages.length = 0;
    return client;
  }

  async #readIopub(): Promise<void> {
    while (!this.#closed) {
      try {
        this.#iopubMessages.push(parse(await this.iopub.receive()));
      } catch {
        return;
      }
      for (const w of this.#waiters.splice(0)) w();
    }
  }

  #waitFor(done: () => boolean, timeoutMs: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(done()), timeoutMs);
      const check = () => {
        if (done()) {
          clearTimeout(timer);
          resolve(true);
        } else this.#waiters.push(check);
      };
      check();
    });
  }

  async #send(msgType: string, content: Record<string, unknown>): Promise<string> {
    const header = { msg_id: randomUUID(), username: "test", session: this.session, date: new Date().toISOString(), msg_type: msgType, version: "5.3" };
    const parts = [header, {}, {}, content].map((p) => JSON.stringify(p));
    const hmac = createHmac("sha256", this.key);
    for (const p of parts) hmac.update(p);
    await this.shell.send([DELIM, hmac.digest("hex"), ...parts]);
    return header.msg_id;
  }

  async #receiveReply(id: string, timeoutMs: number): Promise<Message> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no reply within ${timeoutMs} ms; kernel stderr: ${this.stderr.join("")}`)), timeoutMs);
    });
    try {
      for (;;) {
        const m = parse(await Promise.race([this.shell.receive(), timeout]));
        if (m.parent_header.msg_id === id) return m;
      }
    } finally {
      clearTimeout(timer);
    }
  }

  /** Sends a shell request; returns its reply and its iopub messages (after the kernel is idle again). */
  async request(msgType: string, content: Record<string, unknown>, timeoutMs = 120_000): Promise<{ reply: Message; iopub: Message[] }> {
    const id = await this.#send(msgType, content);
    const reply = await this.#receiveReply(id, timeoutMs);
    const idle = (m: Message) => m.parent_header.msg_id === id && m.header.msg_type === "status" && m.content.execution_state === "idle";
    await this.#waitFor(() => this.#iopubMessages.some(idle), 10_000);
    const iopub = this.#iopubMessages.filter((m) => m.parent_header.msg_id === id);
    this.#iopubMessages.splice(0, this.#iopubMessages.length, ...this.#iopubMessages.filter((m) => m.parent_header.msg_id !== id));
    return { reply, iopub };
  }

  /** Runs a cell. After an error it waits 300 ms: tslab cancels requests that arrive within 200 ms of one. */
  async execute(code: string, timeoutMs?: number): Promise<ExecuteResult> {
    const { reply, iopub } = await this.request(
      "execute_request",
      { code, silent: false, store_history: true, user_expressions: {}, allow_stdin: false },
      timeoutMs,
    );
    if (reply.content.status === "error") await new Promise((r) => setTimeout(r, 300));
    return { reply: reply.content, outputs: iopub.filter((m) => m.header.msg_type !== "status" && m.header.msg_type !== "execute_input") };
  }

  async close(): Promise<void> {
    if (this.process.exitCode === null) {
      await this.#send("shutdown_request", { restart: false }).catch(() => undefined);
      const exited = new Promise((resolve) => this.process.once("exit", resolve));
      const timer = setTimeout(() => this.process.kill("SIGKILL"), 3_000);
      await exited;
      clearTimeout(timer);
    }
    this.#closed = true;
    this.shell.close();
    this.iopub.close();
  }
}

/** The text of the stream outputs of a name. */
export function streamText(outputs: Message[], name: "stdout" | "stderr"): string {
  return outputs
    .filter((m) => m.header.msg_type === "stream" && m.content.name === name)
    .map((m) => m.content.text as string)
    .join("");
}
