// graphile-worker as a peer in claimq's benchmarks/compare (run by compare.py, or by hand):
//
//   node_modules/.bin/node peer.mjs --dsn postgresql://... --jobs 20000 --concurrency 20 \
//       --mode throughput|default [--analyze]
//
// The same workload as `benchmarks/bench.py --mode burn` and peers.py: bulk-enqueue N no-op
// jobs with WorkerUtils.addJobs (one INSERT ... SELECT FROM json_populate_recordset per chunk,
// timed), then drain them with ONE worker pool (`run`) at concurrentJobs = concurrency. The
// drain is timed from the first handler call to the moment the last job is recorded as done
// (graphile-worker deletes a job when it completes; a poller on its own connection counts the
// jobs table every 2 ms, starting only after the last handler call). Prints one JSON object.
//
// Modes:
//   default     graphile-worker's defaults: each of the concurrentJobs workers fetches its own
//               job (get_job) and completes it with its own statement.
//   throughput  its documented high-throughput mode (worker.graphile.org/docs/performance):
//               localQueue.size 500 (one pool-level fetch locks up to 500 jobs),
//               completeJobBatchDelay 0 and failJobBatchDelay 0 (completions batched).
// Both: maxPoolSize = max(10, concurrentJobs + 2), the pool size its docs recommend.

import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { readFileSync, readdirSync } from "node:fs";
import { Logger, makeWorkerUtils, run, runMigrations } from "graphile-worker";
import pg from "pg";

const { values: a } = parseArgs({
  options: {
    dsn: { type: "string" },
    jobs: { type: "string", default: "20000" },
    concurrency: { type: "string", default: "20" },
    "enqueue-batch": { type: "string", default: "5000" },
    mode: { type: "string", default: "throughput" },
    analyze: { type: "boolean", default: false },
    timeout: { type: "string", default: "600" },
    // benchmarks/drain_profile.py: the cluster's postmaster, to count its processes' CPU
    "postmaster-pid": { type: "string", default: "" },
  },
});
const jobs = Number(a.jobs);
const concurrency = Number(a.concurrency);
const chunk = Number(a["enqueue-batch"]);
const timeoutMs = Number(a.timeout) * 1000;
if (!a.dsn) throw new Error("--dsn is required");
if (a.mode !== "throughput" && a.mode !== "default") throw new Error(`unknown --mode ${a.mode}`);

const version = JSON.parse(
  readFileSync(new URL("./node_modules/graphile-worker/package.json", import.meta.url)),
).version;
const maxPoolSize = Math.max(10, concurrency + 2);
const modeOptions =
  a.mode === "throughput"
    ? { localQueue: { size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 }
    : {};

// utime + stime (seconds) of the postmaster and its children (a cluster of the caller's own).
function serverCpu(master) {
  const tick = 100; // USER_HZ on Linux
  const cpu = (pid) => {
    try {
      const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
      return { ppid: Number(f[1]), s: (Number(f[11]) + Number(f[12])) / tick };
    } catch {
      return null;
    }
  };
  let total = cpu(master)?.s ?? 0;
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const p = cpu(name);
    if (p && p.ppid === master) total += p.s;
  }
  return total;
}

let firstCall = null;
let calls = 0;
const seen = new Set();
let allCalled;
const allCalledPromise = new Promise((resolve) => (allCalled = resolve));

async function main() {
  // Errors only (to stderr); stdout carries the one JSON line.
  const quiet = new Logger(() => (level, message) => {
    if (level === "error") console.error(message);
  });
  await runMigrations({ connectionString: a.dsn, logger: quiet });
  const utils = await makeWorkerUtils({ connectionString: a.dsn, logger: quiet });
  const spec = { identifier: "noop", payload: {} };
  const t0 = performance.now();
  for (let offset = 0; offset < jobs; offset += chunk) {
    const n = Math.min(chunk, jobs - offset);
    await utils.addJobs(Array.from({ length: n }, () => spec));
  }
  const enq = (performance.now() - t0) / 1000;
  await utils.release();

  const client = new pg.Client({ connectionString: a.dsn });
  await client.connect();
  if (a.analyze) await client.query("ANALYZE");
  const count = async () =>
    Number((await client.query("SELECT count(*) AS n FROM graphile_worker._private_jobs")).rows[0].n);

  const master = a["postmaster-pid"] ? Number(a["postmaster-pid"]) : 0;
  const snap = async () => {
    const r = (await client.query(
      "SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint AS wal, " +
        "pg_snapshot_xmax(pg_current_snapshot())::text::bigint AS xid")).rows[0];
    return { t: performance.now(), wal: Number(r.wal), xid: Number(r.xid),
      cpu: process.cpuUsage(), server: master ? serverCpu(master) : null };
  };
  const before = await snap();
  const runner = await run({
    noHandleSignals: true,
    logger: quiet,
    preset: {
      worker: {
        connectionString: a.dsn,
        concurrentJobs: concurrency,
        maxPoolSize,
        pollInterval: 2000,
        ...modeOptions,
      },
    },
    taskList: {
      noop: async (_payload, helpers) => {
        if (firstCall === null) firstCall = performance.now();
        calls += 1;
        seen.add(helpers.job.id);
        if (calls >= jobs) allCalled();
      },
    },
  });
  let timer;
  const timedOut = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`jobs not done after ${a.timeout}s`)), timeoutMs);
  });
  await Promise.race([allCalledPromise, timedOut, runner.promise.then(() => {
    throw new Error("the worker stopped before the jobs were done");
  })]);
  let doneAt;
  for (;;) {
    if ((await count()) === 0) {
      doneAt = performance.now();
      break;
    }
    await Promise.race([new Promise((r) => setTimeout(r, 2)), timedOut]);
  }
  const after = await snap();
  clearTimeout(timer);
  await runner.stop();
  const left = await count();
  await client.end();
  const drain = (doneAt - firstCall) / 1000;
  const verify = { left, handler_calls: calls, distinct_jobs: seen.size };
  verify.ok = left === 0 && calls === jobs && seen.size === jobs;
  const out = {
    system: `graphile-worker (${a.mode})`,
    package: "graphile-worker",
    version,
    jobs,
    enqueue: { seconds: enq, jobs_per_s: enq > 0 ? jobs / enq : null },
    drain: { seconds: drain, jobs_per_s: drain > 0 ? jobs / drain : null },
    verify,
    // From just before run() to the moment the jobs table was seen empty.
    drain_costs: {
      window_s: (after.t - before.t) / 1000,
      worker_cpu_us_per_job:
        (after.cpu.user + after.cpu.system - before.cpu.user - before.cpu.system) / jobs,
      server_cpu_us_per_job: master ? (1e6 * (after.server - before.server)) / jobs : null,
      write_transactions: after.xid - before.xid,
      wal_bytes_per_job: (after.wal - before.wal) / jobs,
    },
    settings: {
      node: process.version,
      mode: a.mode,
      concurrentJobs: concurrency,
      maxPoolSize,
      pollInterval: 2000,
      ...modeOptions,
      enqueue: `WorkerUtils.addJobs in chunks of ${chunk}`,
      delivery:
        "at least once; a job's lock lasts 4 h if its worker dies " +
        "(jobs held in the local queue or awaiting a batched completion included)",
    },
  };
  process.stdout.write(JSON.stringify(out) + "\n");
  process.exit(verify.ok ? 0 : 1);
}

main().catch((err) => {
  console.error(err);
  process.exit(2);
});
