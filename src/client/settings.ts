/**
 * The connection settings, read once: `readSettings(options)` takes each of them from the
 * explicit argument, else the environment, else a `.env` file, and returns a `Settings` that
 * everything after it is given instead of reading again: the client (`createClient({ settings })`),
 * the notebook's connection, the errors they scrub.
 *
 * | setting | argument | variables (first set wins) |
 * | --- | --- | --- |
 * | API key | apiKey | CSA_API_KEY (the official Python client's name) |
 * | access id | accessId | CSA_ACCESS_ID |
 * | base URL | baseUrl | RBP_BASE_URL, then CSA_BASE_URL |
 * | version | apiVersion | RBP_API_VERSION |
 *
 * A `Settings` also owns the one redactor of its secrets (internal/redact.ts): `scrub(text)` removes
 * the key and the access id from any text, and the client built from it scrubs with the same one.
 * The secrets are kept in private fields: printing, inspecting or serialising a `Settings` shows
 * whether they are set, never their values.
 */
import { resolve } from "node:path";
import { Redactor } from "../internal/redact.js";
import { readDotEnv } from "./dotenv.js";
import { ConfigurationError } from "./errors.js";

/** Where `readSettings` looks: explicit values first, then `env`, then the `.env` file. */
export interface SettingsInput {
  apiKey?: string;
  accessId?: string;
  baseUrl?: string;
  apiVersion?: string;
  /** Environment to read from; default process.env. */
  env?: Record<string, string | undefined>;
  /** A .env file to read; default `.env` in the working directory; false: none. */
  envFile?: string | false;
}

const REDACTORS = new WeakMap<Settings, Redactor>();

/** Settings read once; see `readSettings`. */
export class Settings {
  readonly #apiKey: string | undefined;
  readonly #accessId: string | undefined;
  /** The base URL as given or read (checked by the client). */
  readonly baseUrl: string | undefined;
  /** The API version as given or read (checked by the client). */
  readonly apiVersion: string | undefined;

  /** @internal Use `readSettings`. */
  constructor(values: { apiKey?: string; accessId?: string; baseUrl?: string; apiVersion?: string }, also: ReadonlyArray<string | undefined> = []) {
    this.#apiKey = values.apiKey;
    this.#accessId = values.accessId;
    this.baseUrl = values.baseUrl;
    this.apiVersion = values.apiVersion;
    REDACTORS.set(this, new Redactor([values.apiKey, values.accessId, ...also]));
  }

  /** The API key (undefined when none is given or set). */
  get apiKey(): string | undefined {
    return this.#apiKey;
  }

  /** The user access id (undefined when none is given or set). */
  get accessId(): string | undefined {
    return this.#accessId;
  }

  /** `text` with the key and the access id (and any secret of the settings this one was derived from) replaced by [redacted]. */
  scrub(text: string): string {
    return redactorOf(this).text(text);
  }

  /**
   * These settings with other credentials and address (the embedded service's), no file or
   * variable read again; the result still scrubs this one's secrets too.
   *
   * @example
   * const local = settings.with({ apiKey: generatedKey, accessId: "rbp-notebook", baseUrl: service.url });
   */
  with(values: { apiKey?: string; accessId?: string; baseUrl?: string }): Settings {
    return new Settings(
      {
        apiKey: values.apiKey ?? this.#apiKey,
        accessId: values.accessId ?? this.#accessId,
        baseUrl: values.baseUrl ?? this.baseUrl,
        apiVersion: this.apiVersion,
      },
      [this.#apiKey, this.#accessId],
    );
  }

  /** Never the secrets' values. */
  toJSON(): Record<string, unknown> {
    return {
      apiKey: this.#apiKey === undefined ? "unset" : "set",
      accessId: this.#accessId === undefined ? "unset" : "set",
      baseUrl: this.baseUrl,
      apiVersion: this.apiVersion,
    };
  }

  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return `Settings ${JSON.stringify(this.toJSON())}`;
  }
}

/** @internal The redactor of a Settings (one per settings read), for the client's transport. */
export function redactorOf(settings: Settings): Redactor {
  const redactor = REDACTORS.get(settings);
  if (redactor === undefined) throw new TypeError("not a Settings made by readSettings");
  return redactor;
}

/**
 * Reads the settings once. A missing `.env` file is no file; an unreadable one is a
 * ConfigurationError (field "envFile"). Blank values count as unset. Nothing is checked here
 * beyond reading: the client checks the values when it is created.
 *
 * @example
 * const settings = readSettings({ env: process.env });        // CSA_API_KEY, RBP_BASE_URL, ...
 * const client = createClient({ settings, timeoutMs: 30_000 }); // reads nothing again
 * settings.scrub(`key ${settings.apiKey}`);                    // "key [redacted]"
 */
export function readSettings(input: SettingsInput = {}): Settings {
  const env = input.env ?? process.env;
  let file: Record<string, string> | undefined;
  if (input.envFile !== false) {
    const path = resolve(input.envFile ?? ".env");
    try {
      file = readDotEnv(path);
    } catch (error) {
      // The message names the file and the system's reason; the explicit secrets are scrubbed from it all the same.
      const given = new Settings({ apiKey: input.apiKey, accessId: input.accessId });
      throw new ConfigurationError("envFile", given.scrub(`the settings file ${path} could not be read: ${(error as Error).message}`));
    }
  }
  const pick = (...names: string[]): string | undefined => {
    for (const source of [env, file ?? {}]) {
      for (const name of names) {
        const v = source[name];
        if (v !== undefined && v.trim() !== "") return v.trim();
      }
    }
    return undefined;
  };
  return new Settings({
    apiKey: input.apiKey ?? pick("CSA_API_KEY"),
    accessId: input.accessId ?? pick("CSA_ACCESS_ID"),
    baseUrl: input.baseUrl ?? pick("RBP_BASE_URL", "CSA_BASE_URL"),
    apiVersion: input.apiVersion ?? pick("RBP_API_VERSION"),
  });
}

/** The switches of the environment read here beside the connection settings (docs/architecture.md, "Settings and the environment"). */
export type EnvSwitch = "RBP_PRESTART";

/**
 * @internal A switch of the environment beside the connection settings, as set (its caller keeps
 * its own reading of the value): `RBP_PRESTART`, whether importing the notebook helper starts the
 * embedded service in the background (notebook/connect.ts `prestartWanted`).
 *
 * @example
 * envSwitch("RBP_PRESTART", { RBP_PRESTART: "0" }); // "0"
 * envSwitch("RBP_PRESTART");                        // process.env.RBP_PRESTART
 */
export function envSwitch(name: EnvSwitch, env: Record<string, string | undefined> = process.env): string | undefined {
  return env[name];
}
