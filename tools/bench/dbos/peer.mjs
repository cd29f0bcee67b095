// peer.mjs - DBOS Transact's side of tools/bench/dbos/side-by-side: W
// workflows of S no-op durable steps (DBOS.runStep), the same work as
// planctl's W instances of a plan of S sequential Dummy steps.  All W are
// started at once (DBOS.startWorkflow), then every result awaited; the time
// runs from the first start to the last result, so it counts the starts
// (DBOS's instance creation) and the run.  A small batch first, untimed,
// warms the pool and the JIT.
//
//   node peer.mjs SYSTEM_DB_URL [W=200] [S=10]
// prints one line: dbos w=W s=S steps=N seconds=T steps_per_s=X
import { DBOS } from '@dbos-inc/dbos-sdk';
import pg from 'pg';

const [url, wArg, sArg] = process.argv.slice(2);
const W = Number(wArg ?? 200);
const S = Number(sArg ?? 10);
if (!url || !(W > 0) || !(S > 0)) {
  console.error('usage: node peer.mjs SYSTEM_DB_URL [W] [S]');
  process.exit(2);
}
DBOS.setConfig({ name: 'planctl_side', systemDatabaseUrl: url, logLevel: 'warn' });

const nothing = async () => {};
const steps = DBOS.registerWorkflow(
  async (k, n) => {
    for (let s = 0; s < n; s++) await DBOS.runStep(nothing, { name: `s${s}` });
    return k;
  },
  { name: 'sideBySide' },
);

async function batch(count) {
  const started = await Promise.all(
    Array.from({ length: count }, (_, k) => DBOS.startWorkflow(steps)(k, S)),
  );
  const got = await Promise.all(started.map((h) => h.getResult()));
  got.forEach((v, k) => {
    if (v !== k) throw new Error(`workflow ${k} returned ${v}`);
  });
  return started.map((h) => h.workflowID);
}

await DBOS.launch();
try {
  await batch(Math.min(20, W));
  const t0 = process.hrtime.bigint();
  const ids = await batch(W);
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  // Every step recorded: what DBOS did is what was asked.
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const done = (
    await c.query(
      'SELECT count(*)::int AS n FROM dbos.operation_outputs WHERE workflow_uuid = ANY($1)',
      [ids],
    )
  ).rows[0].n;
  await c.end();
  if (done !== W * S) throw new Error(`${done} step outputs recorded, not ${W * S}`);
  console.log(
    `dbos w=${W} s=${S} steps=${W * S} seconds=${secs.toFixed(3)} ` +
      `steps_per_s=${((W * S) / secs).toFixed(1)}`,
  );
} finally {
  await DBOS.shutdown();
}
