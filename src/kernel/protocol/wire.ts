/**
 * The Jupyter wire format (messaging protocol 5.3): how one message travels as ZeroMQ frames, and
 * its HMAC-SHA256 signature. Pure: no sockets, no clock but the header's date.
 *
 *     [identities...] "<IDS|MSG>" signature header parent_header metadata content [buffers...]
 *
 * The signature is the hex HMAC of the four JSON frames, with the connection file's key; an empty
 * key means unsigned messages (the signature frame is then empty and not checked), as Jupyter's own
 * Session does. A message whose signature does not verify, or whose frames are not JSON objects, is
 * refused with a `WireError` (`code` `bad_signature` or `bad_message`) and never handled.
 */
import { createHmac, randomUUID, timingSafeEqual } from "node:crypto";
import { RbpBaseError, brand } from "../../errors/index.js";

export const PROTOCOL_VERSION = "5.3";
export const DELIMITER = "<IDS|MSG>";

export interface Header {
  msg_id: string;
  session: string;
  username: string;
  date: string;
  msg_type: string;
  version: string;
  [key: string]: unknown;
}

/** A decoded message. `parent_header` is `{}` for a message with no parent. */
export interface Message<C = Record<string, unknown>> {
  /** The routing identities (ROUTER sockets): where the reply goes. */
  identities: Buffer[];
  header: Header;
  parent_header: Partial<Header>;
  metadata: Record<string, unknown>;
  content: C;
  buffers: Buffer[];
}

/** A message refused at the wire: bad signature or malformed frames. */
export class WireError extends RbpBaseError {
  static {
    brand(this, "WireError");
  }
}

/** The limit of one message's four JSON frames together (a front end's cell is far below it). */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/**
 * The hex HMAC-SHA256 of the four JSON frames ("" when the key is empty: unsigned).
 *
 * @example
 * sign("secret", ['{"msg_id":"1"}', "{}", "{}", "{}"]); // 64 hex digits
 */
export function sign(key: string, parts: ReadonlyArray<string | Buffer>): string {
  if (key === "") return "";
  const hmac = createHmac("sha256", key);
  for (const p of parts) hmac.update(p);
  return hmac.digest("hex");
}

/** Whether `signature` is the frames' signature (constant time). */
export function verify(key: string, signature: string, parts: ReadonlyArray<string | Buffer>): boolean {
  if (key === "") return true;
  const expected = Buffer.from(sign(key, parts), "utf8");
  const given = Buffer.from(signature, "utf8");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * A new header.
 *
 * @example
 * header("status", session); // { msg_id, session, username: "rbp", date, msg_type: "status", version: "5.3" }
 */
export function header(msgType: string, session: string, username = "rbp"): Header {
  return { msg_id: randomUUID(), session, username, date: new Date().toISOString(), msg_type: msgType, version: PROTOCOL_VERSION };
}

function jsonObject(frame: Buffer, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(frame.toString("utf8"));
  } catch (error) {
    throw new WireError(`the ${what} frame is not JSON (${(error as Error).message})`, "bad_message");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new WireError(`the ${what} frame is not a JSON object`, "bad_message");
  return value as Record<string, unknown>;
}

/**
 * Decodes and verifies the frames of one message.
 *
 * @example
 * const msg = decode(await shell.receive(), key); // msg.header.msg_type === "execute_request"
 */
export function decode(frames: readonly Buffer[], key: string): Message {
  const at = frames.findIndex((f) => f.length === DELIMITER.length && f.toString("latin1") === DELIMITER);
  if (at < 0) throw new WireError("no <IDS|MSG> delimiter", "bad_message");
  if (frames.length < at + 6) throw new WireError(`a message needs 5 frames after the delimiter, got ${frames.length - at - 1}`, "bad_message");
  const parts = frames.slice(at + 2, at + 6);
  if (parts.reduce((n, p) => n + p.length, 0) > MAX_MESSAGE_BYTES) throw new WireError(`a message over ${MAX_MESSAGE_BYTES} bytes`, "bad_message");
  if (!verify(key, frames[at + 1].toString("latin1"), parts)) throw new WireError("the message's signature does not verify", "bad_signature");
  const head = jsonObject(parts[0], "header");
  if (typeof head.msg_type !== "string" || typeof head.msg_id !== "string") throw new WireError("the header has no msg_type or msg_id", "bad_message");
  return {
    identities: frames.slice(0, at),
    header: head as Header,
    parent_header: jsonObject(parts[1], "parent_header") as Partial<Header>,
    metadata: jsonObject(parts[2], "metadata"),
    content: jsonObject(parts[3], "content"),
    buffers: frames.slice(at + 6),
  };
}

/** What `encode` takes: a message without its routing. */
export interface Outgoing {
  header: Header;
  parent_header: Partial<Header>;
  metadata?: Record<string, unknown>;
  content: unknown;
  buffers?: Buffer[];
}

/**
 * The frames of a message, signed, for `identities` (empty on PUB sockets: the topic is the
 * message type, as ipykernel does it).
 *
 * @example
 * await socket.send(encode({ header: header("status", s), parent_header: {}, content: { execution_state: "idle" } }, key, []));
 */
export function encode(message: Outgoing, key: string, identities: readonly Buffer[]): Array<string | Buffer> {
  const parts = [
    JSON.stringify(message.header),
    JSON.stringify(message.parent_header),
    JSON.stringify(message.metadata ?? {}),
    JSON.stringify(message.content, jsonReplacer),
  ];
  return [...identities, DELIMITER, sign(key, parts), ...parts, ...(message.buffers ?? [])];
}

/** JSON for content made from user values: bigints as numbers' text, never a throw. */
function jsonReplacer(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? value.toString() : value;
}
