/**
 * A Jupyter connection file: the five ports, the transport, the key and its signature scheme
 * (https://jupyter-client.readthedocs.io/en/stable/kernels.html#connection-files). Read once at
 * start-up; a field that is missing or wrong is named in a `ConnectionError` (`bad_connection_file`).
 */
import { readFileSync } from "node:fs";
import { RbpBaseError, brand } from "../../errors/index.js";

export class ConnectionError extends RbpBaseError {
  static {
    brand(this, "ConnectionError");
  }
  constructor(message: string) {
    super(message, "bad_connection_file");
  }
}

export const CHANNELS = ["shell", "control", "iopub", "stdin", "hb"] as const;
export type Channel = (typeof CHANNELS)[number];

export interface ConnectionInfo {
  transport: "tcp" | "ipc";
  ip: string;
  key: string;
  signature_scheme: "hmac-sha256";
  shell_port: number;
  control_port: number;
  iopub_port: number;
  stdin_port: number;
  hb_port: number;
}

/**
 * The connection info in `text` (the file's JSON), checked.
 *
 * @example
 * parseConnection('{"transport":"tcp","ip":"127.0.0.1","key":"k","signature_scheme":"hmac-sha256","shell_port":5000,...}');
 */
export function parseConnection(text: string): ConnectionInfo {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new ConnectionError(`the connection file is not JSON (${(error as Error).message})`);
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new ConnectionError("the connection file is not a JSON object");
  const o = raw as Record<string, unknown>;
  const transport = o.transport ?? "tcp";
  if (transport !== "tcp" && transport !== "ipc") throw new ConnectionError(`transport "${String(transport)}": expected "tcp" or "ipc"`);
  const scheme = o.signature_scheme ?? "hmac-sha256";
  const key = o.key ?? "";
  if (typeof key !== "string") throw new ConnectionError("key: expected a string");
  if (key !== "" && scheme !== "hmac-sha256") throw new ConnectionError(`signature_scheme "${String(scheme)}": only hmac-sha256 is supported`);
  const ip = o.ip ?? "127.0.0.1";
  if (typeof ip !== "string" || ip === "") throw new ConnectionError("ip: expected a string");
  const port = (channel: Channel): number => {
    const v = o[`${channel}_port`];
    // ipc "ports" are suffixes of the path; 0 is not a port Jupyter writes.
    if (typeof v !== "number" || !Number.isInteger(v) || v < 1 || v > 65535)
      throw new ConnectionError(`${channel}_port: expected a port number, got ${JSON.stringify(v)}`);
    return v;
  };
  return {
    transport,
    ip,
    key,
    signature_scheme: "hmac-sha256",
    shell_port: port("shell"),
    control_port: port("control"),
    iopub_port: port("iopub"),
    stdin_port: port("stdin"),
    hb_port: port("hb"),
  };
}

/** Reads and checks a connection file. */
export function readConnection(path: string): ConnectionInfo {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new ConnectionError(`cannot read the connection file ${path}: ${(error as Error).message}`);
  }
  return parseConnection(text);
}

/** The ZeroMQ address of a channel (`tcp://127.0.0.1:5000`, `ipc://path-1`). */
export function address(info: ConnectionInfo, channel: Channel): string {
  const port = info[`${channel}_port`];
  return info.transport === "tcp" ? `tcp://${info.ip}:${port}` : `ipc://${info.ip}-${port}`;
}
