/**
 * The Temporal packages share one protobufjs: with two copies, a history's JSON cannot be decoded for
 * replay. protobufjs is not a direct dependency; npm places @temporalio/common's protobufjs@8 at the
 * top (common is a direct dependency, so its protobufjs is placed before @grpc/proto-loader's v7).
 */
import path from 'node:path';

const protobufjsOf = (pkg: string) => require.resolve('protobufjs', { paths: [path.dirname(require.resolve(pkg))] });

test('@temporalio/common, proto and worker resolve the same protobufjs, version 8', () => {
  const copies = new Set(['@temporalio/common', '@temporalio/proto', '@temporalio/worker'].map(protobufjsOf));
  expect(copies.size).toBe(1);
  const [main] = copies;
  const root = main.slice(0, main.lastIndexOf(`${path.sep}protobufjs${path.sep}`) + '/protobufjs'.length);
  expect(require(path.join(root, 'package.json')).version).toMatch(/^8\./);
});
