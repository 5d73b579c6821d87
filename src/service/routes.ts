/**
 * The route tables the service serves, in order. Each is a function of the service core, so a
 * version of the API is one module: v3.ts (`/v3`, `/v3/prediction-engine`), v2.ts
 * (`/v2/prediction-engine`, and the legacy `/v2/results` and `/v2/engine/*`, two tables made together).
 */
import type { PredictionService } from "./core.js";
import type { RouteTable } from "./router.js";
import { v2Routes } from "./v2.js";
import { v3Routes } from "./v3.js";

/** The route tables of one version of the API, made for a service (one table, or several that share what they hold). */
export type RouteTableFactory = (service: PredictionService) => RouteTable | RouteTable[];

export const ROUTE_TABLES: RouteTableFactory[] = [v3Routes, v2Routes];
