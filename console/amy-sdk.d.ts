// For the type check only (console/tsconfig.json): the console imports the SDK from the URL the API serves
// its bundle at, ./amy-sdk.js, which is built from the SDK's source; this gives that import the source's types.
export * from '../sdk/src/index';
