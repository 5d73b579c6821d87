/**
 * Authentication: the `x-api-key` header names the organisation (every request), the body's
 * `access_id` one of its users (every POST). Keys and access ids are compared as SHA-256 digests
 * with `crypto.timingSafeEqual`, against every organisation (no early exit), and never echoed.
 *
 * - no `x-api-key` header: 401 `unauthorized`
 * - a key no organisation has: 403 `forbidden` (the API Gateway answer a v2 client expects)
 * - `access_id` missing, not a string, not one of the organisation's users, or expired: 403
 */
import type { IncomingHttpHeaders } from "node:http";
import { timingSafeEqual } from "node:crypto";
import { digest, type Credentials, type Org } from "./credentials.js";
import { ServiceRefusal } from "./refusals.js";

export class Authenticator {
  private readonly orgs: Org[];

  constructor(credentials: Credentials) {
    this.orgs = credentials.orgs;
  }

  /** The organisation whose key the request carries; throws a refusal, `unauthorized` (no key) or `forbidden` (a wrong one). */
  organisation(headers: IncomingHttpHeaders): Org {
    const header = headers["x-api-key"];
    const key = Array.isArray(header) ? header[0] : header;
    if (key === undefined || key === "") {
      throw new ServiceRefusal("unauthorized", "Unauthorized: send the organisation's API key in the x-api-key header", {
        field: "x-api-key",
        expected: "the organisation's API key",
      });
    }
    const given = digest(key);
    let found: Org | undefined;
    for (const org of this.orgs) {
      if (timingSafeEqual(given, org.keyDigest) && found === undefined) found = org;
    }
    if (found === undefined) {
      throw new ServiceRefusal("forbidden", "Forbidden: invalid or unspecified x-api-key", { field: "x-api-key" });
    }
    return found;
  }

  /**
   * Checks a POST body's access_id against the organisation's users; throws a `forbidden` refusal.
   * `digestOf` gives the access id's digest (the lane's endpoint keeps its caller's: that caller is
   * this process, which has no timing to hide from itself).
   */
  checkAccessId(org: Org, body: unknown, now = Date.now(), digestOf: (accessId: string) => Buffer = digest): string {
    const accessId = typeof body === "object" && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>).access_id : undefined;
    if (typeof accessId !== "string" || accessId === "") {
      throw new ServiceRefusal("forbidden", "Invalid Access ID or Key: the body needs access_id, the user's access id", {
        field: "access_id",
        expected: "the user's access id (a non-empty string)",
      });
    }
    const given = digestOf(accessId);
    let user: Org["users"][number] | undefined;
    for (const u of org.users) {
      if (timingSafeEqual(given, u.accessDigest) && user === undefined) user = u;
    }
    if (user === undefined) {
      throw new ServiceRefusal("forbidden", "Invalid Access ID or Key: this access_id is not a user of the API key's organisation", {
        field: "access_id",
      });
    }
    if (user.expires !== undefined && user.expires <= now) {
      throw new ServiceRefusal("forbidden", "Access ID expired.", { field: "access_id" });
    }
    return accessId;
  }
}
