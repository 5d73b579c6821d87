/**
 * The HTTP client of the prediction service (hosted or local), v3 and v2 through the same calls.
 * Public surface: plain interfaces and classes only (no zod or undici types).
 */
export { createClient, RbpClient } from "./client.js";
export {
  AbortError,
  ApiError,
  AuthenticationError,
  ConfigurationError,
  ConnectionError,
  FieldTooLargeError,
  JobFailedError,
  JobPendingError,
  NotFoundError,
  PayloadTooLargeError,
  QuotaExceededError,
  RateLimitError,
  RbpError,
  TimeoutError,
  ValidationError,
} from "./errors.js";
export { RbpBaseError } from "../errors/index.js";
export { X_LIMIT_BYTES } from "./limits.js";
export { isExperimentReceipt } from "./receipts.js";
export { envSwitch, readSettings, Settings, type SettingsInput } from "./settings.js";
export type * from "./types.js";
