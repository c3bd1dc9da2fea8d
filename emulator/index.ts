/**
 * The payments REST API emulator's public surface. The gateway imports only
 * from here (the embedded start and the option loader); the emulator imports
 * nothing from the gateway.
 */
export { loadEmulatorOptionsFromEnv, parseEmulatorEnv, EmulatorConfigError, defaultEmulatorOptions, EMULATOR_SETTING_NAMES } from './options.js';
export type { EmulatorOptions, EmulatorLogger, FaultSpec, ResponseStyle } from './options.js';
export type { StatsSnapshot } from './server.js';
export type { Fault } from './faults.js';
export type { DeliveryRecord } from './dispatcher.js';
export { signWebhookBody } from './dispatcher.js';
export { SANDBOX_PHONES, computeFees } from './lifecycle.js';
export { DEMO_API_KEY } from './seed.js';
export { embeddedAdminToken, startEmbeddedEmulator } from './embedded.js';
export { startEmulator, type RunningEmulator } from './start.js';
