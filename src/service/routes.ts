/**
 * The route tables the service serves, in order. Each is a function of the service core, so a
 * version of the API is one module: v3.ts here; the v2 routes (`/v2/prediction-engine`, in
 * v2.ts) join by adding `v2Routes` to this list.
 */
import type { PredictionService } from "./core.js";
import type { RouteTable } from "./router.js";
import { v3Routes } from "./v3.js";

export type RouteTableFactory = (service: PredictionService) => RouteTable;

export const ROUTE_TABLES: RouteTableFactory[] = [v3Routes];
