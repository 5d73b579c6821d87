/** Job codes and the digests of secrets: their form, and that nothing repeats across the codes' buffer refills. */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { digest } from "../../src/service/credentials.js";
import { newCode } from "../../src/service/store/records.js";

describe("job codes and digests", () => {
  it("a code is 16 lower-case hex characters, and 2,000 codes (four refills of the buffer) are all different", () => {
    const codes = Array.from({ length: 2000 }, () => newCode());
    for (const code of codes) expect(code).toMatch(/^[0-9a-f]{16}$/);
    expect(new Set(codes).size).toBe(codes.length);
    // Every hex digit turns up in every position (64 random bits, not a counter).
    for (let i = 0; i < 16; i++) expect(new Set(codes.map((c) => c[i])).size).toBe(16);
  });

  it("a digest is the SHA-256 of the secret's UTF-8 bytes", () => {
    for (const secret of ["me", "", "ünïcødé 🔑", "x".repeat(1000)]) {
      expect(digest(secret).equals(createHash("sha256").update(secret, "utf8").digest())).toBe(true);
    }
  });
});
