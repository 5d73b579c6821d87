/**
 * A minimal Jupyter client for the kernel tests and the kernel bench: starts a kernel process on a
 * connection file of its own and speaks the wire protocol (HMAC-SHA256 signed frames) over
 * ZeroMQ on all five channels, so the protocol tests need neither Python nor Jupyter.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHmac, randomBytes, randomUUID } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { Dealer, Request, Subscriber } from "zeromq";

export interface Message {
  header: { msg_id: string; msg_type: string; [k: string]: unknown };
  parent_header: { msg_id?: string; [k: string]: unknown };
  metadata: Record<string, unknown>;
  content: Record<string, any>;
}

const DELIM = "<IDS|MSG>";

export async function freePorts(n: number): Promise<number[]> {
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
  /** Every iopub message of the request, status included. */
  iopub: Message[];
}

export interface ExecuteOptions {
  silent?: boolean;
  store_history?: boolean;
  allow_stdin?: boolean;
  stop_on_error?: boolean;
}

/** How to start a kernel: a command line with `{connection_file}`, as a kernelspec's argv. */
export interface KernelStart {
  argv: string[];
  dir: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

export class KernelClient {
  readonly stderr: string[] = [];
  readonly #iopubMessages: Message[] = [];
  readonly #replies = new Map<string, Message>();
  readonly #stdinMessages: Message[] = [];
  #waiters: Array<() => void> = [];
  #closed = false;
  /** When the process started (performance.now()), and when the first kernel_info_reply came. */
  readonly startedAt: number;
  firstReplyAt = 0;

  private constructor(
    readonly process: ChildProcess,
    readonly key: string,
    readonly session: string,
    readonly shell: Dealer,
    readonly control: Dealer,
    readonly stdin: Dealer,
    readonly iopub: Subscriber,
    readonly ports: { shell: number; iopub: number; stdin: number; control: number; hb: number },
  ) {
    this.startedAt = performance.now();
  }

  /** Starts `node <main> --config-path <file>` (the rbp kernel). */
  static startMain(options: { main: string; dir: string; cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number; args?: string[] }): Promise<KernelClient> {
    return KernelClient.start({ ...options, argv: [process.execPath, options.main, "--config-path", "{connection_file}", ...(options.args ?? [])] });
  }

  /** Starts a kernel and waits until it answers on shell and publishes on iopub. */
  static async start(options: KernelStart): Promise<KernelClient> {
    const [shell_port, iopub_port, stdin_port, control_port, hb_port] = await freePorts(5);
    const key = randomBytes(16).toString("hex");
    const file = join(options.dir, `kernel-${randomUUID()}.json`);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(
      file,
      JSON.stringify({ transport: "tcp", ip: "127.0.0.1", shell_port, iopub_port, stdin_port, control_port, hb_port, key, signature_scheme: "hmac-sha256" }),
    );
    const argv = options.argv.map((a) => (a === "{connection_file}" ? file : a));
    const child = spawn(argv[0], argv.slice(1), { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", "pipe"] });
    const identity = randomUUID();
    const shell = new Dealer({ routingId: identity });
    const stdin = new Dealer({ routingId: identity });
    const control = new Dealer();
    const iopub = new Subscriber();
    for (const s of [shell, stdin, control, iopub]) s.linger = 0;
    const client = new KernelClient(child, key, randomUUID(), shell, control, stdin, iopub, {
      shell: shell_port,
      iopub: iopub_port,
      stdin: stdin_port,
      control: control_port,
      hb: hb_port,
    });
    child.stderr!.setEncoding("utf8").on("data", (s: string) => {
      client.stderr.push(s);
      client.#wake();
    });
    child.stdout!.resume();
    child.once("exit", () => client.#wake());
    shell.connect(`tcp://127.0.0.1:${shell_port}`);
    control.connect(`tcp://127.0.0.1:${control_port}`);
    stdin.connect(`tcp://127.0.0.1:${stdin_port}`);
    iopub.connect(`tcp://127.0.0.1:${iopub_port}`);
    iopub.subscribe();
    void client.#read(iopub, (m) => client.#iopubMessages.push(m));
    void client.#read(shell, (m) => client.#replies.set(m.parent_header.msg_id ?? "", m));
    void client.#read(control, (m) => client.#replies.set(m.parent_header.msg_id ?? "", m));
    void client.#read(stdin, (m) => client.#stdinMessages.push(m));
    // A subscriber misses what is published before it is connected: ask for kernel_info until an
    // iopub status for one of the requests arrives.
    const deadline = Date.now() + (options.timeoutMs ?? 60_000);
    for (;;) {
      const id = await client.send("kernel_info_request", {});
      await client.reply(id, Math.max(1, deadline - Date.now()));
      if (client.firstReplyAt === 0) client.firstReplyAt = performance.now();
      const seen = await client.#waitFor(() => client.#iopubMessages.some((m) => m.parent_header.msg_id === id), 500);
      if (seen) break;
      if (Date.now() > deadline) throw new Error("the kernel's iopub channel never answered");
    }
    client.#iopubMessages.length = 0;
    return client;
  }

  async #read(socket: Dealer | Subscriber, put: (m: Message) => void): Promise<void> {
    while (!this.#closed) {
      try {
        put(parse((await socket.receive()) as Buffer[]));
      } catch {
        return;
      }
      this.#wake();
    }
  }

  #wake(): void {
    for (const w of this.#waiters.splice(0)) w();
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

  /** Signs and sends a request; returns its msg_id. */
  async send(
    msgType: string,
    content: Record<string, unknown>,
    channel: "shell" | "control" | "stdin" = "shell",
    parent: Record<string, unknown> = {},
  ): Promise<string> {
    const header = { msg_id: randomUUID(), username: "test", session: this.session, date: new Date().toISOString(), msg_type: msgType, version: "5.3" };
    const parts = [header, parent, {}, content].map((p) => JSON.stringify(p));
    const hmac = createHmac("sha256", this.key);
    for (const p of parts) hmac.update(p);
    await this[channel].send([DELIM, hmac.digest("hex"), ...parts]);
    return header.msg_id;
  }

  /** Sends raw frames on the shell channel (for the refusal of bad signatures). */
  async sendFrames(frames: Array<string | Buffer>): Promise<void> {
    await this.shell.send(frames);
  }

  /** The reply to a request (shell or control). */
  async reply(id: string, timeoutMs = 120_000): Promise<Message> {
    const ok = await this.#waitFor(() => this.#replies.has(id) || this.process.exitCode !== null || this.process.signalCode !== null, timeoutMs);
    const m = this.#replies.get(id);
    if (!ok || m === undefined)
      throw new Error(`no reply to ${id} (${ok ? "the kernel exited" : `within ${timeoutMs} ms`}); kernel stderr: ${this.stderr.join("")}`);
    this.#replies.delete(id);
    return m;
  }

  /** The iopub messages of a request, once its idle status has come. */
  async iopubOf(id: string, timeoutMs = 120_000): Promise<Message[]> {
    const idle = (m: Message) => m.parent_header.msg_id === id && m.header.msg_type === "status" && m.content.execution_state === "idle";
    if (!(await this.#waitFor(() => this.#iopubMessages.some(idle), timeoutMs)))
      throw new Error(`no idle status for ${id}; kernel stderr: ${this.stderr.join("")}`);
    const mine = this.#iopubMessages.filter((m) => m.parent_header.msg_id === id);
    this.#iopubMessages.splice(0, this.#iopubMessages.length, ...this.#iopubMessages.filter((m) => m.parent_header.msg_id !== id));
    return mine;
  }

  /** Waits for an iopub message of a request that matches. */
  async iopubMatching(id: string, match: (m: Message) => boolean, timeoutMs = 120_000): Promise<Message> {
    const find = () => this.#iopubMessages.find((m) => m.parent_header.msg_id === id && match(m));
    if (!(await this.#waitFor(() => find() !== undefined, timeoutMs)))
      throw new Error(`no matching iopub message for ${id}; kernel stderr: ${this.stderr.join("")}`);
    return find()!;
  }

  /** Waits until the kernel's stderr matches. */
  async waitForStderr(pattern: RegExp, timeoutMs = 60_000): Promise<boolean> {
    return this.#waitFor(() => pattern.test(this.stderr.join("")), timeoutMs);
  }

  /** The next message on stdin (an input_request). */
  async stdinNext(timeoutMs = 120_000): Promise<Message> {
    if (!(await this.#waitFor(() => this.#stdinMessages.length > 0, timeoutMs))) throw new Error("no stdin message");
    return this.#stdinMessages.shift()!;
  }

  /** Sends a request; returns its reply and its iopub messages (after the kernel is idle again). */
  async request(
    msgType: string,
    content: Record<string, unknown>,
    timeoutMs = 120_000,
    channel: "shell" | "control" = "shell",
  ): Promise<{ reply: Message; iopub: Message[] }> {
    const id = await this.send(msgType, content, channel);
    const reply = await this.reply(id, timeoutMs);
    return { reply, iopub: await this.iopubOf(id, timeoutMs) };
  }

  /** Sends an execute_request; returns its msg_id. */
  sendExecute(code: string, options: ExecuteOptions = {}): Promise<string> {
    return this.send("execute_request", {
      code,
      silent: false,
      store_history: true,
      user_expressions: {},
      allow_stdin: false,
      stop_on_error: true,
      ...options,
    });
  }

  /** The reply and outputs of a sent execute_request. */
  async executeResult(id: string, timeoutMs = 120_000): Promise<ExecuteResult> {
    const reply = await this.reply(id, timeoutMs);
    const iopub = await this.iopubOf(id, timeoutMs);
    return { reply: reply.content, iopub, outputs: iopub.filter((m) => m.header.msg_type !== "status" && m.header.msg_type !== "execute_input") };
  }

  /** Runs a cell. */
  async execute(code: string, timeoutMs?: number, options: ExecuteOptions = {}): Promise<ExecuteResult> {
    return this.executeResult(await this.sendExecute(code, options), timeoutMs);
  }

  /** The kernel's exit (code or signal), once it has exited. */
  exited(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.process.exitCode !== null || this.process.signalCode !== null)
      return Promise.resolve({ code: this.process.exitCode, signal: this.process.signalCode });
    return new Promise((resolve) => this.process.once("exit", (code, signal) => resolve({ code, signal })));
  }

  /** One heartbeat: a frame sent on hb comes back. */
  async heartbeat(): Promise<Buffer> {
    const hb = new Request();
    hb.linger = 0;
    hb.connect(`tcp://127.0.0.1:${this.ports.hb}`);
    try {
      await hb.send("ping");
      const [frame] = await hb.receive();
      return frame;
    } finally {
      hb.close();
    }
  }

  /** Shuts the kernel down (control channel) and waits for the process to exit (SIGKILL after 10 s). */
  async close(): Promise<void> {
    if (this.process.exitCode === null && this.process.signalCode === null) {
      await this.send("shutdown_request", { restart: false }, "control").catch(() => undefined);
      const timer = setTimeout(() => this.process.kill("SIGKILL"), 10_000);
      await this.exited();
      clearTimeout(timer);
    }
    this.#closed = true;
    for (const s of [this.shell, this.control, this.stdin, this.iopub]) s.close();
  }
}

/** The text of the stream outputs of a name. */
export function streamText(outputs: Message[], name: "stdout" | "stderr"): string {
  return outputs
    .filter((m) => m.header.msg_type === "stream" && m.content.name === name)
    .map((m) => m.content.text as string)
    .join("");
}
