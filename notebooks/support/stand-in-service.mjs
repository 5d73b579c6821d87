#!/usr/bin/env node
/**
 * A stand-in for the hosted prediction service, used by notebooks 7 and 9 so that they run
 * anywhere without an account. It is the local service (the code `rbp serve` runs) in a process of
 * its own on 127.0.0.1, with one organisation as a provider would set it up: an API key, one user's
 * access id and a plan quota, read from the environment:
 *
 *   STAND_IN_API_KEY     the organisation's key (x-api-key)
 *   STAND_IN_ACCESS_ID   the user's access id (access_id in every POST)
 *   STAND_IN_QUOTA       units of the plan (default 100)
 *
 * It prints one JSON line, {"url": "http://127.0.0.1:PORT"}, once it listens, and stops when its
 * standard input closes (the notebook's kernel closed the pipe, or ended) or on SIGTERM, so it never
 * outlives the notebook that started it.
 */
import { startLocalService } from "../../dist/service/index.js";

const apiKey = process.env.STAND_IN_API_KEY;
const accessId = process.env.STAND_IN_ACCESS_ID;
if (!apiKey || !accessId) {
  process.stderr.write("stand-in-service: set STAND_IN_API_KEY and STAND_IN_ACCESS_ID\n");
  process.exit(2);
}
const quota = Number(process.env.STAND_IN_QUOTA ?? 100);
const service = await startLocalService({ port: 0, apiKey, accessId, quota, workers: 1 });
process.stdout.write(JSON.stringify({ url: service.url }) + "\n");

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  service.close().finally(() => process.exit(0));
};
process.stdin.on("end", stop);
process.stdin.on("close", stop);
process.stdin.resume();
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
