/**
 * Whether the tests run in CI (`CI` set to anything but "", "0" or "false"). Suites that need a
 * system tool (Chromium, Jupyter) skip without it on a developer's machine but fail in CI, so a
 * CI run can never pass by skipping them.
 */
const flag = process.env.CI ?? "";
export const IN_CI = flag !== "" && flag !== "0" && flag !== "false";
