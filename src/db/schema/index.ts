export * from "./content";
export * from "./events";
export * from "./exports";
export * from "./identity";
export * from "./progress";
export * from "./sealing";
export * from "./tokens";
export * from "./webhooks";
