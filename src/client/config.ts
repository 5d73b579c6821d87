/**
 * Resolves the client's configuration from its settings (settings.ts: read once, explicit arguments
 * over the environment over a `.env` file in the working directory) and its own options.
 * Here they are checked: the key is present and plain; the version is v3 or v2 (also "3", "2").
 *
 * The base URL has no default: the specification gives the hosted address only as a
 * placeholder, so a caller names it (the notebook layer passes the local service's URL).
 *
 * A base URL is the service root or a version root. `http://host:8765` serves v3 under `/v3` and
 * v2 under `/v2/prediction-engine`; a URL ending in `/v3`, `/v3/prediction-engine`, `/v2` or
 * `/v2/prediction-engine` is used as it is (and sets the version unless one is given).
 */
import { ConfigurationError } from "./errors.js";
import { readSettings, type Settings } from "./settings.js";
import type { ApiVersion, ClientOptions, PollOptions } from "./types.js";

export interface ResolvedConfig {
  /** What was read (once): the transport scrubs with its redactor. */
  settings: Settings;
  apiKey: string;
  accessId: string | undefined;
  apiVersion: ApiVersion;
  /** Scheme, host and port, e.g. `http://127.0.0.1:8765`. */
  origin: string;
  /** Path of the version root, e.g. `/v3` or `/v2/prediction-engine` (no trailing slash). */
  root: string;
  /** origin + root. */
  baseUrl: string;
  timeoutMs: number;
  maxRetries: number;
  retryBaseDelayMs: number;
  retryMaxDelayMs: number;
  maxRetryAfterMs: number;
  maxResponseBytes: number;
  poll: Required<PollOptions>;
  log: ((line: string) => void) | undefined;
}

export const DEFAULTS = {
  timeoutMs: 60_000,
  maxRetries: 2,
  retryBaseDelayMs: 500,
  retryMaxDelayMs: 8_000,
  maxRetryAfterMs: 60_000,
  maxResponseBytes: 128 * 1024 * 1024,
  poll: { initialDelayMs: 10, factor: 1.5, maxDelayMs: 2_000 },
} as const;

const VERSION_ROOTS: Array<{ suffix: string; version: ApiVersion }> = [
  { suffix: "/v3/prediction-engine", version: "v3" },
  { suffix: "/v2/prediction-engine", version: "v2" },
  { suffix: "/v3", version: "v3" },
  { suffix: "/v2", version: "v2" },
];

/** Options that say where to read the settings; with `settings` given, nothing is read and these must be absent. */
const READ_OPTIONS = ["apiKey", "accessId", "baseUrl", "apiVersion", "env", "envFile"] as const;

/**
 * The client's configuration: the settings read once (or given), checked in this order: the key,
 * the base URL, the version, then the numeric options.
 *
 * @example
 * const config = resolveConfig({ apiKey: "k", baseUrl: "http://127.0.0.1:8765" });
 * config.baseUrl; // "http://127.0.0.1:8765/v3"
 */
export function resolveConfig(options: ClientOptions = {}): ResolvedConfig {
  const settings = settingsOf(options);
  const apiKey = checkedApiKey(settings.apiKey);
  const accessId = settings.accessId;
  const url = baseUrlOf(settings.baseUrl);
  const { apiVersion, root } = versionRootOf(url, settings.apiVersion);
  return {
    settings,
    apiKey,
    accessId: accessId === "" ? undefined : accessId,
    apiVersion,
    origin: url.origin,
    root,
    baseUrl: url.origin + root,
    ...numericOptions(options),
    log: options.log,
  };
}

/** The settings given (then nothing else says where to read them), or read now. */
function settingsOf(options: ClientOptions): Settings {
  if (options.settings === undefined) return readSettings(options);
  const both = READ_OPTIONS.filter((name) => options[name] !== undefined);
  if (both.length > 0) {
    throw new ConfigurationError("settings", `pass either settings (already read) or ${both.join(", ")}, not both: settings are read once, by readSettings`);
  }
  return options.settings;
}

/** The API key: present, and plain (no spaces around it, no control characters). */
function checkedApiKey(apiKey: string | undefined): string {
  if (apiKey === undefined || apiKey === "") {
    throw new ConfigurationError(
      "CSA_API_KEY",
      "no API key: pass apiKey, or set CSA_API_KEY in the environment or in a .env file (for the local service, use startLocalService().credentials.apiKey)",
    );
  }
  if (/[\r\n\0]/.test(apiKey) || apiKey.trim() !== apiKey) {
    throw new ConfigurationError("CSA_API_KEY", "the API key contains spaces or control characters; check the value of CSA_API_KEY");
  }
  return apiKey;
}

/** The base URL: given, absolute, http(s), with no user name or password. */
function baseUrlOf(rawBase: string | undefined): URL {
  if (rawBase === undefined || rawBase === "") {
    throw new ConfigurationError(
      "baseUrl",
      "no base URL: pass baseUrl, or set RBP_BASE_URL (or CSA_BASE_URL). The hosted service's address is not published in the API specification, so there is no default; for the local service pass startLocalService().url",
    );
  }
  let url: URL;
  try {
    url = new URL(rawBase);
  } catch {
    throw new ConfigurationError("baseUrl", `the base URL ${JSON.stringify(rawBase)} is not an absolute URL (e.g. http://127.0.0.1:8765)`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ConfigurationError("baseUrl", `the base URL must be http or https, got ${url.protocol}`);
  }
  if (url.username !== "" || url.password !== "") {
    throw new ConfigurationError("baseUrl", "the base URL must not carry a user name or password");
  }
  return url;
}

/** The API version (the setting's, else the URL's version root's, else v3) and the path of its root below the URL's origin. */
function versionRootOf(url: URL, rawVersion: Settings["apiVersion"]): { apiVersion: ApiVersion; root: string } {
  const path = url.pathname.replace(/\/+$/, "");
  const versionRoot = VERSION_ROOTS.find((r) => path.endsWith(r.suffix));
  let apiVersion: ApiVersion;
  if (rawVersion !== undefined) {
    const v = String(rawVersion).trim().toLowerCase();
    if (v === "v3" || v === "3") apiVersion = "v3";
    else if (v === "v2" || v === "2") apiVersion = "v2";
    else throw new ConfigurationError("apiVersion", `apiVersion must be "v3" or "v2", got ${JSON.stringify(rawVersion)}`);
  } else {
    apiVersion = versionRoot?.version ?? "v3";
  }
  if (!versionRoot) return { apiVersion, root: `${path}${apiVersion === "v3" ? "/v3" : "/v2/prediction-engine"}` };
  if (versionRoot.version !== apiVersion) {
    throw new ConfigurationError(
      "apiVersion",
      `the base URL is a ${versionRoot.version} root (${path}) but apiVersion is ${apiVersion}; give the service root or a ${apiVersion} root`,
    );
  }
  // A bare /v2 root means the v2 API's own prefix below it.
  return { apiVersion, root: versionRoot.suffix === "/v2" ? `${path}/prediction-engine` : path };
}

type NumericOptions = Pick<
  ResolvedConfig,
  "timeoutMs" | "maxRetries" | "retryBaseDelayMs" | "retryMaxDelayMs" | "maxRetryAfterMs" | "maxResponseBytes" | "poll"
>;

/** The timeouts, retries, size bound and polling of the options, each a finite number at least its minimum, or its default. */
function numericOptions(options: ClientOptions): NumericOptions {
  const number = (name: string, value: number | undefined, fallback: number, min: number): number => {
    if (value === undefined) return fallback;
    if (typeof value !== "number" || !Number.isFinite(value) || value < min) {
      throw new ConfigurationError(name, `${name} must be a number >= ${min}, got ${String(value)}`);
    }
    return value;
  };
  const poll = options.poll ?? {};
  return {
    timeoutMs: number("timeoutMs", options.timeoutMs, DEFAULTS.timeoutMs, 1),
    maxRetries: Math.floor(number("maxRetries", options.maxRetries, DEFAULTS.maxRetries, 0)),
    retryBaseDelayMs: number("retryBaseDelayMs", options.retryBaseDelayMs, DEFAULTS.retryBaseDelayMs, 0),
    retryMaxDelayMs: number("retryMaxDelayMs", options.retryMaxDelayMs, DEFAULTS.retryMaxDelayMs, 0),
    maxRetryAfterMs: number("maxRetryAfterMs", options.maxRetryAfterMs, DEFAULTS.maxRetryAfterMs, 0),
    maxResponseBytes: Math.floor(number("maxResponseBytes", options.maxResponseBytes, DEFAULTS.maxResponseBytes, 1)),
    poll: {
      initialDelayMs: number("poll.initialDelayMs", poll.initialDelayMs, DEFAULTS.poll.initialDelayMs, 0),
      factor: number("poll.factor", poll.factor, DEFAULTS.poll.factor, 1),
      maxDelayMs: number("poll.maxDelayMs", poll.maxDelayMs, DEFAULTS.poll.maxDelayMs, 0),
    },
  };
}
