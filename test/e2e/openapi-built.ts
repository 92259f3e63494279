/**
 * The OpenAPI document as the worker builds it, built here in Node from the same route groups: the
 * route modules load in Node as well as in workerd, and nothing here opens a binding.
 */
export async function builtDocument(): Promise<any> {
  // Specifiers in variables: this folder is type-checked with Node's types, the worker's modules
  // with the Workers runtime's (tsconfig.json), so the checker must not follow these imports.
  const appModule: string = "../../src/app";
  const documentModule: string = "../../src/domains/system/document";
  const [{ allGroupApps }, { buildDocument }] = await Promise.all([
    import(appModule),
    import(documentModule),
  ]);
  return buildDocument(await allGroupApps());
}
