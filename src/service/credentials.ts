/**
 * Who may use the service: organisations, each with an API key (the `x-api-key` header), a plan
 * quota and its users' access ids (the `access_id` of POST bodies).
 *
 * A credentials file is JSON:
 *
 * ```json
 * { "orgs": [ { "name": "research", "api_key": "...", "plan": { "quota": 1000 },
 *               "users": [ { "access_id": "...", "expires": "2027-01-01T00:00:00Z" } ] } ] }
 * ```
 *
 * Without a file the service has one organisation, "local", whose key and access id are the
 * caller's (`apiKey`/`accessId`), else `CSA_API_KEY`/`CSA_ACCESS_ID` from the environment (what
 * the notebook client reads), else generated; with a data dir, generated ones are kept there
 * (`local-credentials.json`, mode 0600) so that they survive a restart too.
 *
 * Only SHA-256 digests of keys and access ids are kept in memory; plain keys are never logged.
 */
import { RbpBaseError, brand } from "../errors/index.js";
import { hash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";

/** A credentials file that cannot be used (not JSON, or an entry at fault); code `credentials_invalid`. */
export class CredentialsFileError extends RbpBaseError {
  static {
    brand(this, "CredentialsFileError");
  }
  override readonly name = "CredentialsFileError";
  constructor(message: string) {
    super(message, "credentials_invalid");
  }
}
import { writeFileAtomicSync } from "./store/persistence.js";

/** Quota of the single local organisation when none is given. */
export const DEFAULT_LOCAL_QUOTA = 1_000_000;
export const LOCAL_ORG = "local";

export interface OrgUser {
  accessDigest: Buffer;
  /** Milliseconds since the epoch; absent = never. */
  expires?: number;
}

export interface Org {
  name: string;
  keyDigest: Buffer;
  /** Units of the plan (one per theta row of a POST). */
  quota: number;
  users: OrgUser[];
}

export interface Credentials {
  orgs: Org[];
}

const dateString = z.string().refine((s) => !Number.isNaN(Date.parse(s)), { message: "an ISO date, e.g. 2027-01-01T00:00:00Z" });

export const CredentialsFileSchema = z.object({
  orgs: z
    .array(
      z
        .object({
          name: z.string().min(1, "a non-empty organisation name"),
          api_key: z.string().min(8, "an API key of at least 8 characters"),
          plan: z.object({ quota: z.number().int().nonnegative() }).passthrough().optional(),
          users: z.array(z.object({ access_id: z.string().min(1), expires: dateString.optional() }).passthrough()),
        })
        .passthrough(),
    )
    .min(1, "at least one organisation"),
});
export type CredentialsFile = z.output<typeof CredentialsFileSchema>;

/** The SHA-256 digest of a secret's UTF-8 bytes (crypto.hash: one call, no Hash object: 0.05 ms of a warm in-process call was createHash's). */
export function digest(secret: string): Buffer {
  return hash("sha256", secret, "buffer");
}

/** Builds the in-memory credentials from a parsed file; throws on duplicates. */
export function credentialsFrom(file: CredentialsFile, defaultQuota = DEFAULT_LOCAL_QUOTA): Credentials {
  const names = new Set<string>();
  const keys = new Set<string>();
  const orgs = file.orgs.map((org, i) => {
    if (names.has(org.name)) throw new Error(`credentials: orgs[${i}]: the name "${org.name}" is used twice`);
    names.add(org.name);
    const keyDigest = digest(org.api_key);
    if (keys.has(keyDigest.toString("hex"))) throw new Error(`credentials: orgs[${i}] (${org.name}): its api_key is already another organisation's`);
    keys.add(keyDigest.toString("hex"));
    return {
      name: org.name,
      keyDigest,
      quota: org.plan?.quota ?? defaultQuota,
      users: org.users.map((u) => ({ accessDigest: digest(u.access_id), ...(u.expires !== undefined ? { expires: Date.parse(u.expires) } : {}) })),
    };
  });
  return { orgs };
}

/**
 * Reads and checks a credentials file; the error names the file and the entry at fault (never a
 * key). `first` is the first organisation's key and first user, for a caller who needs one.
 */
export function loadCredentialsFile(
  path: string,
  defaultQuota = DEFAULT_LOCAL_QUOTA,
): { credentials: Credentials; first: { apiKey: string; accessId: string } } {
  const text = readFileSync(path, "utf8");
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // Not the parser's message: it quotes the text, which holds keys.
    throw new CredentialsFileError(`credentials file ${path} is not valid JSON`);
  }
  const parsed = CredentialsFileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new CredentialsFileError(`credentials file ${path}: ${issue.path.join(".") || "(top level)"}: ${issue.message}`);
  }
  const org = parsed.data.orgs[0];
  return { credentials: credentialsFrom(parsed.data, defaultQuota), first: { apiKey: org.api_key, accessId: org.users[0]?.access_id ?? "" } };
}

export function generateApiKey(): string {
  return randomBytes(24).toString("base64url");
}

export function generateAccessId(): string {
  return randomBytes(12).toString("hex");
}

export interface LocalCredentialSettings {
  apiKey?: string;
  accessId?: string;
  quota?: number;
  dataDir?: string;
  env?: NodeJS.ProcessEnv;
}

export interface LocalCredentials {
  credentials: Credentials;
  apiKey: string;
  accessId: string;
  /** Where the key and access id came from. */
  source: { apiKey: CredentialSource; accessId: CredentialSource };
}

export type CredentialSource = "option" | "env" | "data-dir" | "generated";

const LOCAL_FILE = "local-credentials.json";

/** The single-organisation credentials used when no credentials file is given. */
export function localCredentials(settings: LocalCredentialSettings = {}): LocalCredentials {
  const env = settings.env ?? process.env;
  let stored: { api_key?: string; access_id?: string } = {};
  const storedPath = settings.dataDir !== undefined ? join(settings.dataDir, LOCAL_FILE) : undefined;
  if (storedPath !== undefined && existsSync(storedPath)) {
    try {
      stored = JSON.parse(readFileSync(storedPath, "utf8"));
    } catch {
      stored = {};
    }
  }
  const pick = (option: string | undefined, fromEnv: string | undefined, kept: string | undefined, make: () => string) => {
    if (option) return { value: option, source: "option" as const };
    if (fromEnv) return { value: fromEnv, source: "env" as const };
    if (kept) return { value: kept, source: "data-dir" as const };
    return { value: make(), source: "generated" as const };
  };
  const key = pick(settings.apiKey, env.CSA_API_KEY, stored.api_key, generateApiKey);
  const access = pick(settings.accessId, env.CSA_ACCESS_ID, stored.access_id, generateAccessId);
  if (storedPath !== undefined && (key.source === "generated" || access.source === "generated")) {
    const keep = {
      api_key: key.source === "generated" ? key.value : stored.api_key,
      access_id: access.source === "generated" ? access.value : stored.access_id,
    };
    mkdirSync(settings.dataDir!, { recursive: true });
    writeFileAtomicSync(storedPath, JSON.stringify(keep, null, 2) + "\n", 0o600);
  }
  const credentials: Credentials = {
    orgs: [
      {
        name: LOCAL_ORG,
        keyDigest: digest(key.value),
        quota: settings.quota ?? DEFAULT_LOCAL_QUOTA,
        users: [{ accessDigest: digest(access.value) }],
      },
    ],
  };
  return { credentials, apiKey: key.value, accessId: access.value, source: { apiKey: key.source, accessId: access.source } };
}
