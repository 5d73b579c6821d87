/** The largest X a POST carries: 5 MiB of JSON (docs/limits.md, "Kept under 5 MiB"). */
export const X_LIMIT_BYTES = 5 * 1024 * 1024;
