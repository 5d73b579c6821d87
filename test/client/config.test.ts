/** Settings: arguments over environment over .env; base URLs and versions; clear errors. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { resolveConfig } from "../../src/client/config.js";
import { parseDotEnv } from "../../src/client/dotenv.js";
import { ConfigurationError, createClient, readSettings, Settings } from "../../src/client/index.js";
import { inspect } from "node:util";

const dir = mkdtempSync(join(tmpdir(), "rbp-client-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const envFile = (text: string) => {
  const path = join(dir, `env-${Math.random().toString(36).slice(2)}`);
  writeFileSync(path, text);
  return path;
};

describe(".env parsing", () => {
  it("reads KEY=VALUE lines, quotes, comments and export", () => {
    const parsed = parseDotEnv(
      [
        "# a comment",
        "",
        "CSA_API_KEY=abc123 # trailing comment",
        "export CSA_ACCESS_ID = 'user #1'",
        'RBP_BASE_URL="http://127.0.0.1:8765"',
        'MULTI="a\\nb \\"q\\""',
        "EMPTY=",
        "not a line",
        "1BAD=x",
        "CSA_API_KEY=later",
      ].join("\r\n"),
    );
    expect(parsed).toEqual({
      CSA_API_KEY: "later",
      CSA_ACCESS_ID: "user #1",
      RBP_BASE_URL: "http://127.0.0.1:8765",
      MULTI: 'a\nb "q"',
      EMPTY: "",
    });
  });
});

describe("resolveConfig", () => {
  it("arguments win over the environment, which wins over .env", () => {
    const file = envFile("CSA_API_KEY=from-file-key\nCSA_ACCESS_ID=file-user\nRBP_BASE_URL=http://file:1\nRBP_API_VERSION=v2\n");
    const fromFile = resolveConfig({ env: {}, envFile: file });
    expect(fromFile).toMatchObject({
      apiKey: "from-file-key",
      accessId: "file-user",
      origin: "http://file:1",
      apiVersion: "v2",
      root: "/v2/prediction-engine",
    });

    const env = { CSA_API_KEY: "from-env-key", CSA_BASE_URL: "http://env:2" };
    const fromEnv = resolveConfig({ env, envFile: file });
    expect(fromEnv).toMatchObject({ apiKey: "from-env-key", accessId: "file-user", origin: "http://env:2" });

    const args = resolveConfig({ env, envFile: file, apiKey: "arg-key", accessId: "arg-user", baseUrl: "http://arg:3", apiVersion: "v3" });
    expect(args).toMatchObject({ apiKey: "arg-key", accessId: "arg-user", origin: "http://arg:3", apiVersion: "v3", baseUrl: "http://arg:3/v3" });
  });

  it("RBP_BASE_URL wins over CSA_BASE_URL", () => {
    expect(resolveConfig({ env: { CSA_API_KEY: "k-123", RBP_BASE_URL: "http://a:1", CSA_BASE_URL: "http://b:2" }, envFile: false }).origin).toBe("http://a:1");
  });

  it("a missing .env file is fine", () => {
    expect(resolveConfig({ env: { CSA_API_KEY: "k-123", RBP_BASE_URL: "http://a:1" }, envFile: join(dir, "absent") }).apiKey).toBe("k-123");
  });

  it.each([
    ["http://h:1", undefined, "v3", "http://h:1/v3"],
    ["http://h:1/", "v2", "v2", "http://h:1/v2/prediction-engine"],
    ["https://api.example.com/v2/prediction-engine", undefined, "v2", "https://api.example.com/v2/prediction-engine"],
    ["https://api.example.com/v2", undefined, "v2", "https://api.example.com/v2/prediction-engine"],
    ["http://h:1/v3/prediction-engine/", undefined, "v3", "http://h:1/v3/prediction-engine"],
    ["http://h:1/proxy", "v3", "v3", "http://h:1/proxy/v3"],
  ])("base URL %s (version %s) -> %s %s", (baseUrl, apiVersion, version, root) => {
    const c = resolveConfig({ env: {}, envFile: false, apiKey: "k-123", baseUrl, apiVersion: apiVersion as "v2" | undefined });
    expect(c.apiVersion).toBe(version);
    expect(c.baseUrl).toBe(root);
  });

  it("says what is missing", () => {
    const noKey = () => resolveConfig({ env: {}, envFile: false, baseUrl: "http://h:1" });
    expect(noKey).toThrow(ConfigurationError);
    expect(noKey).toThrow(/CSA_API_KEY/);
    const noBase = () => resolveConfig({ env: { CSA_API_KEY: "k-123" }, envFile: false });
    expect(noBase).toThrow(/RBP_BASE_URL/);
    expect(noBase).toThrow(/not published/);
    expect(() => resolveConfig({ env: {}, envFile: false, apiKey: "k-123", baseUrl: "localhost:8765" })).toThrow(/not an absolute URL|http or https/);
    expect(() => resolveConfig({ env: {}, envFile: false, apiKey: "k-123", baseUrl: "http://h/v2/prediction-engine", apiVersion: "v3" })).toThrow(/v2 root/);
    expect(() => resolveConfig({ env: { RBP_API_VERSION: "v4" }, envFile: false, apiKey: "k-123", baseUrl: "http://h" })).toThrow(/v3" or "v2/);
    expect(() => resolveConfig({ env: {}, envFile: false, apiKey: "bad\nkey", baseUrl: "http://h" })).toThrow(/control characters/);
    expect(() => resolveConfig({ env: {}, envFile: false, apiKey: "k-123", baseUrl: "http://h", timeoutMs: -1 })).toThrow(/timeoutMs/);
  });

  it("the error for a missing key does not depend on, or show, anything secret", () => {
    try {
      createClient({ env: { CSA_ACCESS_ID: "someone-secret" }, envFile: false, baseUrl: "http://h:1" });
    } catch (e) {
      expect((e as ConfigurationError).setting).toBe("CSA_API_KEY");
      expect(JSON.stringify(e)).not.toContain("someone-secret");
      return;
    }
    throw new Error("expected a ConfigurationError");
  });
});

describe("readSettings: the settings read once", () => {
  /** An environment that counts how often each variable is read. */
  const counting = (values: Record<string, string>) => {
    const reads: Record<string, number> = {};
    const env = new Proxy(values, {
      get(target, name: string) {
        reads[name] = (reads[name] ?? 0) + 1;
        return target[name];
      },
    }) as Record<string, string | undefined>;
    return { env, reads };
  };

  it("a client made from settings reads no variable again and scrubs with the same secrets", () => {
    const { env, reads } = counting({ CSA_API_KEY: "k-abcdef-123", CSA_ACCESS_ID: "user-0042", RBP_BASE_URL: "http://h:1", RBP_API_VERSION: "v2" });
    const settings = readSettings({ env, envFile: false });
    const after = { ...reads };
    expect(after).toEqual({ CSA_API_KEY: 1, CSA_ACCESS_ID: 1, RBP_BASE_URL: 1, RBP_API_VERSION: 1 });
    const client = createClient({ settings, timeoutMs: 1000 });
    expect(reads).toEqual(after);
    expect(client.baseUrl).toBe("http://h:1/v2/prediction-engine");
    expect(settings.scrub("k-abcdef-123 and user-0042")).toBe("[redacted] and [redacted]");
  });

  it("never shows the secrets when printed, inspected or serialised", () => {
    const settings = readSettings({ apiKey: "k-abcdef-123", accessId: "user-0042", env: {}, envFile: false });
    expect(settings).toBeInstanceOf(Settings);
    for (const text of [JSON.stringify(settings), inspect(settings), String(settings), inspect({ settings }, { depth: 5, showHidden: true })]) {
      expect(text).not.toContain("k-abcdef-123");
      expect(text).not.toContain("user-0042");
    }
    expect(JSON.parse(JSON.stringify(settings))).toMatchObject({ apiKey: "set", accessId: "set" });
  });

  it("settings and the options that say where to read them are not both taken", () => {
    const settings = readSettings({ apiKey: "k-abcdef-123", baseUrl: "http://h:1", env: {}, envFile: false });
    const both = () => createClient({ settings, apiKey: "other-key-1234" });
    expect(both).toThrow(ConfigurationError);
    expect(both).toThrow(/settings .*apiKey/);
  });

  it("derived settings (the embedded service's credentials) still scrub the ones read", () => {
    const settings = readSettings({ env: { CSA_API_KEY: "hosted-key-98765" }, envFile: false });
    const local = settings.with({ apiKey: "local-key-12345", accessId: "local-user-1", baseUrl: "http://127.0.0.1:9" });
    expect(local.apiKey).toBe("local-key-12345");
    expect(local.scrub("hosted-key-98765 / local-key-12345 / local-user-1")).toBe("[redacted] / [redacted] / [redacted]");
  });
});
