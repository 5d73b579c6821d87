/**
 * The rbp kernel's protocol pieces on their own: the wire format and its signature
 * (protocol/wire.ts), the connection file (protocol/connection.ts), the history (history.ts), the
 * display of a last value (display.ts) and the cursor's code points (shell.ts). The kernel as a
 * whole, over real sockets, is kernel.test.ts.
 */
import { createHmac } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DELIMITER, PROTOCOL_VERSION, WireError, decode, encode, header, sign, verify } from "../../src/kernel/protocol/wire.js";
import { ConnectionError, address, parseConnection } from "../../src/kernel/protocol/connection.js";
import { History, globRegExp } from "../../src/kernel/history.js";
import { DisplayHook, resultBundle } from "../../src/kernel/display.js";
import { codePointOffset, utf16Offset } from "../../src/kernel/shell.js";
import type { CellOutput } from "../../src/kernel/contract.js";

const KEY = "a0436f6c-1916-498b-8eb9-e81ab9368e84";
const OUT = join(process.cwd(), "test-output", "kernel-protocol");

describe("the wire format", () => {
  it("signs the four JSON frames with HMAC-SHA256 of the key, as jupyter_client does", () => {
    const parts = ['{"msg_id":"1"}', "{}", "{}", '{"code":"1"}'];
    const expected = createHmac("sha256", KEY).update(parts.join("")).digest("hex");
    expect(sign(KEY, parts)).toBe(expected);
    expect(verify(KEY, expected, parts)).toBe(true);
    expect(
      verify(
        KEY,
        expected.replace(/.$/, (c) => (c === "0" ? "1" : "0")),
        parts,
      ),
    ).toBe(false);
    expect(verify(KEY, expected.slice(1), parts)).toBe(false);
    expect(verify("other key", expected, parts)).toBe(false);
    // An empty key: unsigned messages, as Jupyter's Session has them.
    expect(sign("", parts)).toBe("");
    expect(verify("", "anything", parts)).toBe(true);
  });

  it("round-trips a message with its identities and buffers", () => {
    const h = header("execute_request", "session-1", "me");
    expect(h).toMatchObject({ msg_type: "execute_request", session: "session-1", username: "me", version: PROTOCOL_VERSION });
    const frames = encode({ header: h, parent_header: {}, metadata: { m: 1 }, content: { code: "x", big: 10n }, buffers: [Buffer.from([1, 2])] }, KEY, [
      Buffer.from("id-1"),
    ]);
    expect(frames[1]).toBe(DELIMITER);
    const m = decode(
      frames.map((f) => Buffer.from(f)),
      KEY,
    );
    expect(m.identities.map(String)).toEqual(["id-1"]);
    expect(m.header).toEqual(h);
    expect(m.parent_header).toEqual({});
    expect(m.metadata).toEqual({ m: 1 });
    // A bigint of a cell's value travels as its digits, never as a throw.
    expect(m.content).toEqual({ code: "x", big: "10" });
    expect(m.buffers.map((b) => [...b])).toEqual([[1, 2]]);
  });

  it("refuses a forged signature, a missing delimiter, missing frames and frames that are not JSON objects", () => {
    const good = encode({ header: header("kernel_info_request", "s"), parent_header: {}, content: {} }, KEY, []).map((f) => Buffer.from(f));
    const forged = [...good];
    forged[1] = Buffer.from("0".repeat(64));
    const codeOf = (frames: Buffer[]) => {
      try {
        decode(frames, KEY);
        return "decoded";
      } catch (e) {
        expect(e).toBeInstanceOf(WireError);
        return (e as WireError).code;
      }
    };
    expect(codeOf(forged)).toBe("bad_signature");
    expect(codeOf(good.slice(1))).toBe("bad_message");
    expect(codeOf(good.slice(0, 4))).toBe("bad_message");
    const notJson = [good[0], Buffer.from(sign(KEY, ["nope", "{}", "{}", "{}"])), Buffer.from("nope"), Buffer.from("{}"), Buffer.from("{}"), Buffer.from("{}")];
    expect(codeOf(notJson)).toBe("bad_message");
    const array = [good[0], Buffer.from(sign(KEY, ["[]", "{}", "{}", "{}"])), Buffer.from("[]"), Buffer.from("{}"), Buffer.from("{}"), Buffer.from("{}")];
    expect(codeOf(array)).toBe("bad_message");
    expect(codeOf(good)).toBe("decoded");
  });
});

describe("the connection file", () => {
  const file = {
    transport: "tcp",
    ip: "127.0.0.1",
    key: KEY,
    signature_scheme: "hmac-sha256",
    shell_port: 5001,
    control_port: 5002,
    iopub_port: 5003,
    stdin_port: 5004,
    hb_port: 5005,
  };

  it("gives each channel's address", () => {
    const info = parseConnection(JSON.stringify(file));
    expect(address(info, "shell")).toBe("tcp://127.0.0.1:5001");
    expect(address(info, "hb")).toBe("tcp://127.0.0.1:5005");
    expect(address({ ...info, transport: "ipc", ip: "/tmp/k" }, "iopub")).toBe("ipc:///tmp/k-5003");
  });

  it("names the field at fault", () => {
    const bad = (patch: Record<string, unknown>) => () => parseConnection(JSON.stringify({ ...file, ...patch }));
    expect(bad({ shell_port: "5001" })).toThrow(/shell_port: expected a port number, got "5001"/);
    expect(bad({ hb_port: 70000 })).toThrow(/hb_port/);
    expect(bad({ transport: "udp" })).toThrow(/transport "udp"/);
    expect(bad({ signature_scheme: "hmac-md5" })).toThrow(/only hmac-sha256/);
    expect(bad({ key: 1 })).toThrow(/key: expected a string/);
    expect(() => parseConnection("{")).toThrow(ConnectionError);
  });
});

describe("the history", () => {
  function filled(): History {
    const h = new History();
    h.store(1, "const a = 1", "const a = 1");
    h.store(2, "a + 1", "a + 1");
    h.setOutput(2, "2");
    h.store(3, "%time a + 2", "$rbp.timed(a + 2)");
    h.setOutput(3, "3");
    h.store(4, "a + 1", "a + 1");
    h.setOutput(4, "2");
    return h;
  }

  it("tail: the last n entries, with outputs and raw or translated input", () => {
    const h = filled();
    expect(h.session).toBe(1);
    expect(h.tail(2)).toEqual([
      [1, 3, "%time a + 2"],
      [1, 4, "a + 1"],
    ]);
    expect(h.tail(2, { output: true, raw: false })).toEqual([
      [1, 3, ["$rbp.timed(a + 2)", "3"]],
      [1, 4, ["a + 1", "2"]],
    ]);
    expect(h.tail(0)).toEqual([]);
    expect(h.tail(99)).toHaveLength(4);
  });

  it("range: lines start to stop (excluded) of this session (0) or one counted back", () => {
    const h = filled();
    expect(h.range(0, 2, 4)).toEqual([
      [1, 2, "a + 1"],
      [1, 3, "%time a + 2"],
    ]);
    expect(h.range(undefined, 3, undefined)).toEqual([
      [1, 3, "%time a + 2"],
      [1, 4, "a + 1"],
    ]);
    expect(h.range(-1, 1, 5)).toEqual([]);
  });

  it("search: a glob over the whole input, the last n matches, each input once with unique", () => {
    const h = filled();
    expect(h.search("a + *").map((r) => r[1])).toEqual([2, 4]);
    expect(h.search("a + *", { unique: true }).map((r) => r[1])).toEqual([4]);
    expect(h.search("*", { n: 3 }).map((r) => r[1])).toEqual([2, 3, 4]);
    expect(h.search("%time*", { raw: false })).toEqual([]);
    expect(h.search("$rbp*", { raw: false }).map((r) => r[1])).toEqual([3]);
    expect(globRegExp("a?c*").test("abc(d)")).toBe(true);
    expect(globRegExp("a.c").test("abc")).toBe(false);
  });

  it("a history file: earlier sessions read back, the new session numbered after them, outputs kept", () => {
    rmSync(OUT, { recursive: true, force: true });
    mkdirSync(OUT, { recursive: true });
    const file = join(OUT, "history.jsonl");
    const first = new History(file);
    first.store(1, "1 + 1", "1 + 1");
    first.setOutput(1, "2");
    const second = new History(file);
    expect(second.session).toBe(2);
    second.store(1, "'again'", "'again'");
    expect(second.tail(5, { output: true })).toEqual([
      [1, 1, ["1 + 1", "2"]],
      [2, 1, ["'again'", null]],
    ]);
    expect(second.range(-1, 1, undefined)).toEqual([[1, 1, "1 + 1"]]);
    // A broken line is skipped, not fatal.
    writeFileSync(file, readFileSync(file, "utf8") + "{not json\n");
    expect(new History(file).session).toBe(3);
    const warnings: string[] = [];
    const unwritable = new History(join(OUT, "missing-dir", "h.jsonl"), (m) => warnings.push(m));
    unwritable.store(1, "x", "x");
    expect(warnings[0]).toMatch(/cannot be written .*kept in memory only/);
    expect(unwritable.tail(1)).toEqual([[1, 1, "x"]]);
  });
});

describe("the display of a last value", () => {
  it("util.inspect text without colours, nothing for undefined, the bundle of Symbol.for('Jupyter.display')", async () => {
    expect(await resultBundle(undefined)).toBeUndefined();
    expect(await resultBundle(3)).toEqual({ "text/plain": "3" });
    expect(await resultBundle("s")).toEqual({ "text/plain": "'s'" });
    expect((await resultBundle(new Map([["k", { deep: [1] }]])))!["text/plain"]).not.toContain("\u001b[");
    const rich = { [Symbol.for("Jupyter.display")]: () => ({ "text/html": "<b>x</b>", "not a mime type": 1, "text/markdown": undefined }) };
    const bundle = await resultBundle(rich);
    expect(Object.keys(bundle!).sort()).toEqual(["text/html", "text/plain"]);
    expect(await resultBundle({ [Symbol.for("Jupyter.display")]: async () => ({ "text/plain": "later" }) })).toEqual({ "text/plain": "later" });
    // An empty bundle means "shown already" (the helper's promise of outputs sent).
    expect(await resultBundle({ [Symbol.for("Jupyter.display")]: () => ({}) })).toBeUndefined();
    await expect(resultBundle({ [Symbol.for("Jupyter.display")]: () => Promise.reject(new Error("no")) })).rejects.toThrow("no");
  });

  it("the hook sends displays and clears to the bound cell, and tells listeners of kernel_info", () => {
    const sent: unknown[] = [];
    const output: CellOutput = {
      stream: () => undefined,
      display: (data, options) => sent.push(["display", data, options]),
      clearOutput: (wait) => sent.push(["clear", wait]),
      input: () => Promise.resolve(""),
    };
    const hook = new DisplayHook();
    hook.display({ "text/plain": "before any cell" });
    hook.bind(output);
    hook.display({ "text/plain": "p", "text/html": "<p>" }, { displayId: "d1", update: true });
    hook.clearOutput(true);
    expect(sent).toEqual([
      ["display", { "text/plain": "p", "text/html": "<p>" }, { displayId: "d1", update: true }],
      ["clear", true],
    ]);
    let heard = 0;
    hook.onKernelInfo(() => heard++);
    hook.onKernelInfo(() => {
      throw new Error("a listener's failure");
    });
    hook.kernelInfo();
    expect(heard).toBe(1);
    const target = {};
    hook.install(target);
    expect((target as Record<symbol, unknown>)[Symbol.for("rbp.kernel")]).toBe(hook);
  });
});

describe("cursor positions", () => {
  it("converts the protocol's code points to UTF-16 units and back", () => {
    const text = "'😀'; bas";
    expect(utf16Offset(text, 5)).toBe(6);
    expect(codePointOffset(text, 6)).toBe(5);
    expect(utf16Offset(text, 99)).toBe(text.length);
  });
});
