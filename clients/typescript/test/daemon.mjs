// A real lazymemd on a free loopback port over a temporary store, for the
// tests. The binary is $LAZYMEM_BIN, else built with `go build` from the
// repository root. Without one, startDaemon() returns { skip: reason },
// except under CI=true, where it throws: a CI run cannot pass by skipping.

import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, openSync, closeSync, readFileSync, rmSync, accessSync, constants, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";

export const TOKEN = "test-token-7c21";
// Limits small enough that a 413 is cheap to provoke.
export const MAX_BODY = 1 << 20;
export const MAX_BATCH = 100;
export const MAX_AGENTS = 5;

const here = dirname(fileURLToPath(import.meta.url));

function unavailable(why) {
  const msg = `no lazymemd to test against: ${why} (set LAZYMEM_BIN, or install Go)`;
  if (process.env.CI === "true") throw new Error(`lazymemd is needed under CI=true: ${why}`);
  return { skip: msg };
}

function repoRoot() {
  for (let d = here; ; d = dirname(d)) {
    if (existsSync(join(d, "go.mod")) && existsSync(join(d, "cmd", "lazymemd"))) return d;
    if (dirname(d) === d) return undefined;
  }
}

function findGo() {
  for (const p of (process.env.PATH ?? "").split(":")) {
    const f = join(p || ".", "go");
    try {
      accessSync(f, constants.X_OK);
      if (statSync(f).isFile()) return f;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** The binary: { bin } or { skip }. work is a directory to build into. */
function binary(work) {
  const envBin = process.env.LAZYMEM_BIN;
  if (envBin) {
    try {
      accessSync(envBin, constants.X_OK);
    } catch {
      return unavailable(`LAZYMEM_BIN=${envBin} is not an executable file`);
    }
    return { bin: envBin };
  }
  const root = repoRoot();
  if (!root) return unavailable("LAZYMEM_BIN is unset and no repository root (go.mod) is above the tests");
  const go = findGo();
  if (!go) return unavailable("LAZYMEM_BIN is unset and `go` is not on PATH");
  const out = join(work, "lazymemd");
  const r = spawnSync(go, ["build", "-o", out, "./cmd/lazymemd"], { cwd: root, encoding: "utf8" });
  if (r.status !== 0) return unavailable(`go build ./cmd/lazymemd failed: ${(r.stderr ?? String(r.error)).slice(-2000)}`);
  return { bin: out };
}

/**
 * Starts a daemon with a bearer token. Resolves to { url, token, stop } or
 * { skip: reason }. stop() sends SIGTERM, waits, and removes the store.
 */
export async function startDaemon(extraArgs = []) {
  const work = mkdtempSync(join(tmpdir(), "lazymem-ts-"));
  const b = binary(work);
  if (!b.bin) {
    rmSync(work, { recursive: true, force: true });
    return b;
  }
  const log = join(work, "stderr.log");
  const fd = openSync(log, "w");
  const env = { ...process.env, LAZYMEMD_TOKEN: TOKEN };
  const proc = spawn(
    b.bin,
    ["--db", join(work, "db"), "--addr", "127.0.0.1:0", "--quiet", "--max-body", String(MAX_BODY),
      "--max-batch", String(MAX_BATCH), "--max-agents", String(MAX_AGENTS), ...extraArgs],
    { stdio: ["ignore", "ignore", fd], env },
  );
  closeSync(fd);
  let exited = null;
  const done = new Promise((res) => proc.on("exit", (code, sig) => { exited = code ?? sig; res(); }));
  const stop = async () => {
    if (exited === null) {
      proc.kill("SIGTERM");
      const t = setTimeout(() => proc.kill("SIGKILL"), 20000);
      await done;
      clearTimeout(t);
    }
    rmSync(work, { recursive: true, force: true });
  };
  // The daemon logs `msg="lazymemd listening" url=http://127.0.0.1:PORT`
  // once it accepts (--addr :0 lets the kernel pick a free port), then
  // opens the store in the background: GET /v1/ready turns 200 when it is.
  const deadline = Date.now() + 60000;
  let url;
  while (Date.now() < deadline) {
    const text = readFileSync(log, "utf8");
    const m = /url=(http:\/\/\S+)/.exec(text);
    if (m && url === undefined) url = m[1];
    if (url !== undefined) {
      const r = await fetch(url + "/v1/ready");
      await r.arrayBuffer();
      if (r.status === 200) return { url, token: TOKEN, stop };
      if (r.status !== 503) throw new Error(`GET /v1/ready: ${r.status}`);
    }
    if (exited !== null) {
      await stop();
      throw new Error(`lazymemd exited (${exited}): ${text.trim()}`);
    }
    await sleep(20);
  }
  await stop();
  throw new Error(`lazymemd was not ready within 60 s (address ${url})`);
}

export const packageRoot = resolve(here, "..");
