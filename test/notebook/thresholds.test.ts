/**
 * The thresholds a Prediction labels its calibrations with (issue 12, item 4) are the ones the job
 * ran with: the request resolved as the service resolves it (threshold_range and stepsize, the
 * defaults, v2's PSR sweep), on a v2 connection as on v3. The service's own account of the same
 * job, read through v3, is the reference.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, type RbpClient } from "../../src/client/index.js";
import { connect, disconnect, predict, type Prediction } from "../../src/notebook/index.js";
import { startLocalService, type LocalService } from "../../src/service/index.js";
import { quickstartFrame, quickstartTheta } from "./helpers.js";

let service: LocalService;
let v3: RbpClient;
beforeAll(async () => {
  service = await startLocalService({ port: 0, workers: 2 });
  v3 = createClient({ baseUrl: service.url, apiKey: service.credentials.apiKey, accessId: service.credentials.accessId, apiVersion: "v3", env: {} });
});
afterAll(async () => {
  await disconnect();
  await v3?.close();
  await service?.close();
});

const quiet = { progress: "none" as const, showErrors: false };
const spec = () => ({ y: "Points", theta: quickstartTheta() });

const CASES: Array<{ name: string; analysis: "psr" | "maxfit" | "grid"; options: Record<string, unknown>; want: { v2: number[]; v3: number[] } | "winner" }> = [
  { name: "PSR with no threshold (v2 sweeps five, v3 takes 0.5)", analysis: "psr", options: {}, want: { v2: [0, 0.2, 0.4, 0.6, 0.8], v3: [0.5] } },
  { name: "PSR with a threshold list", analysis: "psr", options: { threshold: [0.2, 0.8] }, want: { v2: [0.2, 0.8], v3: [0.2, 0.8] } },
  {
    name: "PSR with threshold_range and stepsize",
    analysis: "psr",
    options: { threshold_range: [0.1, 0.5], stepsize: 0.2 },
    want: { v2: [0.1, 0.3, 0.5], v3: [0.1, 0.3, 0.5] },
  },
  { name: "Grid with its defaults", analysis: "grid", options: {}, want: { v2: [0, 0.2, 0.5, 0.8], v3: [0, 0.2, 0.5, 0.8] } },
  {
    name: "Grid with threshold_range and stepsize",
    analysis: "grid",
    options: { threshold_range: [0, 0.6], stepsize: 0.3 },
    want: { v2: [0, 0.3, 0.6], v3: [0, 0.3, 0.6] },
  },
  { name: "MaxFit with its defaults (the winner)", analysis: "maxfit", options: {}, want: "winner" },
  {
    name: "MaxFit, adjusted fit, a threshold_range (the winner)",
    analysis: "maxfit",
    options: { objective: "adjusted_fit", threshold_range: [0.2, 0.8], stepsize: 0.3 },
    want: "winner",
  },
  { name: "MaxFit in score units (the winner)", analysis: "maxfit", options: { censor_unit: "score", threshold: [-6, -2, 0, 2] }, want: "winner" },
];

for (const version of ["v2", "v3"] as const) {
  describe(`a ${version} connection`, () => {
    beforeAll(async () => {
      await connect({
        baseUrl: service.url,
        apiKey: service.credentials.apiKey,
        accessId: service.credentials.accessId,
        apiVersion: version,
        env: {},
        envFile: false,
      });
    });

    for (const c of CASES) {
      it(`${c.name}: labelled with the thresholds the job ran with`, async () => {
        const p = (await predict(c.analysis, quickstartFrame(), spec(), c.options as never, quiet)) as Prediction;
        // The service's account of the same job (v3 results carry the thresholds it ran with).
        const ran = await v3.result({ job_id: p.receipt.job_id, job_code: p.receipt.job_code });
        expect(ran.thresholds).toBeDefined();
        expect(p.thresholds).toEqual(ran.thresholds);
        if (c.want !== "winner") expect(p.thresholds).toEqual(c.want[version]);
        else expect(p.thresholds).toHaveLength(1);
        // Tables and reports show them: no dash in the summary's threshold column.
        const table = p.table().text;
        if (c.analysis === "grid") expect(table).toContain(`grid of ${ran.thresholds!.join(", ")}`);
        else for (const t of ran.thresholds!) expect(table).toContain(String(t));
        expect(p.table().html).not.toMatch(/<td>\s*—\s*<\/td>\s*<td>(relevance|similarity)/);
      });
    }
  });
}
