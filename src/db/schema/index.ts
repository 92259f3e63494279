export * from "./identity";
export * from "./tokens";
