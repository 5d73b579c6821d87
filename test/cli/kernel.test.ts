import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

// The built command, as a user runs it (npm test builds before vitest runs).
const rbp = fileURLToPath(new URL("../../dist/cli/rbp.js", import.meta.url));
const tslabBin = fileURLToPath(new URL("../../node_modules/tslab/bin/tslab", import.meta.url));
const tslabGuard = pathToFileURL(fileURLToPath(new URL("../../dist/cli/tslab-guard.js", import.meta.url))).href;
const temp = mkdtempSync(join(tmpdir(), "rbp-kernel-"));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

function run(args: string[], env: NodeJS.ProcessEnv = process.env) {
  const result = spawnSync(process.execPath, [rbp, ...args], { encoding: "utf8", env });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

function spec(dir: string) {
  return JSON.parse(readFileSync(join(dir, "kernel.json"), "utf8"));
}

const hasJupyter = spawnSync("jupyter", ["--version"], { encoding: "utf8" }).status === 0;

describe("rbp kernel install", () => {
  it("writes a tslab kernelspec into a JUPYTER_PATH directory", () => {
    const dir = join(temp, "jp");
    const { code, stdout, stderr } = run(["kernel", "install", "--jupyter-path", dir]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const where = join(dir, "kernels", "rbp-tslab");
    expect(stdout).toContain(where);
    expect(stdout).toContain(`JUPYTER_PATH=${dir}`);
    const s = spec(where);
    expect(s.argv).toEqual([process.execPath, "--import", tslabGuard, tslabBin, "kernel", "--config-path", "{connection_file}"]);
    expect(s.display_name).toBe("TypeScript (tslab)");
    expect(s.language).toBe("typescript");
    expect(s.metadata.rbp_notebook).toMatchObject({ kind: "tslab", tslab: "1.0.22" });
    // Run again: the spec is replaced, not duplicated.
    expect(run(["kernel", "install", "--jupyter-path", dir]).stdout).toMatch(/replaced kernelspec "rbp-tslab"/);
  });

  it("takes a name, a display name and a prefix", () => {
    const prefix = join(temp, "env");
    const { code } = run(["kernel", "install", "--prefix", prefix, "--name", "My-TS", "--display-name=TS for rbp"]);
    expect(code).toBe(0);
    const s = spec(join(prefix, "share", "jupyter", "kernels", "my-ts"));
    expect(s.display_name).toBe("TS for rbp");
  });

  it("installs for the user into the Jupyter data directory, with or without the jupyter command", () => {
    // With jupyter on PATH the directory comes from `jupyter --data-dir` (which honours JUPYTER_DATA_DIR).
    const data = join(temp, "data");
    const withEnv = run(["kernel", "install"], { ...process.env, JUPYTER_DATA_DIR: data });
    expect(withEnv.code).toBe(0);
    expect(existsSync(join(data, "kernels", "rbp-tslab", "kernel.json"))).toBe(true);
    // Without jupyter (an empty PATH), the platform rule: XDG_DATA_HOME/jupyter.
    const xdg = join(temp, "xdg");
    const bare = run(["kernel", "install", "--user"], { HOME: join(temp, "home"), XDG_DATA_HOME: xdg, PATH: "" });
    expect(bare.code).toBe(0);
    expect(bare.stdout).toMatch(/directory from XDG_DATA_HOME/);
    expect(existsSync(join(xdg, "jupyter", "kernels", "rbp-tslab", "kernel.json"))).toBe(true);
    const home = run(["kernel", "install"], { HOME: join(temp, "home"), PATH: "" });
    expect(home.code).toBe(0);
    expect(existsSync(join(temp, "home", ".local", "share", "jupyter", "kernels", "rbp-tslab", "kernel.json"))).toBe(true);
  });

  it.skipIf(!hasJupyter)("is listed by Jupyter's own kernelspec manager", () => {
    const dir = join(temp, "listed");
    expect(run(["kernel", "install", "--jupyter-path", dir]).code).toBe(0);
    const list = spawnSync("jupyter", ["kernelspec", "list", "--json"], { encoding: "utf8", env: { ...process.env, JUPYTER_PATH: dir } });
    expect(list.status).toBe(0);
    const found = JSON.parse(list.stdout).kernelspecs["rbp-tslab"];
    expect(found.resource_dir).toBe(join(dir, "kernels", "rbp-tslab"));
    expect(found.spec.language).toBe("typescript");
  });

  it.each([
    [["kernel"], /which kernel command/],
    [["kernel", "uninstall"], /unknown kernel command "uninstall"/],
    [["kernel", "install", "--kind", "python"], /unknown kernel kind "python"; expected one of tslab/],
    [["kernel", "install", "--name", "a b"], /a kernel name has only/],
    [["kernel", "install", "--prefix", "/tmp/a", "--jupyter-path", "/tmp/b"], /choose one of --prefix, --jupyter-path/],
    [["kernel", "install", "--prefix"], /--prefix needs a value/],
  ])("refuses %j", (args, message) => {
    const { code, stderr } = run(args);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
  });

  it("a tslab kernel started from the kernelspec exits when another process holds one of its ports (Jupyter's port race), instead of living on unbound", async () => {
    const dir = join(temp, "race");
    expect(run(["kernel", "install", "--jupyter-path", dir]).code).toBe(0);
    const argv = spec(join(dir, "kernels", "rbp-tslab")).argv as string[];
    // One port held by a server here (what another process took after Jupyter chose it), four free.
    const held = await listening();
    const free: Server[] = await Promise.all([0, 1, 2, 3].map(() => listening()));
    const ports = [held, ...free].map((s) => (s.address() as { port: number }).port);
    await Promise.all(free.map((s) => new Promise((resolve) => s.close(resolve))));
    const connection = join(temp, "race-connection.json");
    writeFileSync(
      connection,
      JSON.stringify({
        transport: "tcp",
        ip: "127.0.0.1",
        shell_port: ports[0],
        iopub_port: ports[1],
        stdin_port: ports[2],
        control_port: ports[3],
        hb_port: ports[4],
        key: "race",
        signature_scheme: "hmac-sha256",
      }),
    );
    const child = spawn(
      argv[0],
      argv.slice(1).map((a) => (a === "{connection_file}" ? connection : a)),
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    try {
      // Without the guard tslab logs the failure and never exits: this test then times out.
      const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
      expect(code).toBe(1);
      expect(stderr).toContain(`cannot bind tcp://127.0.0.1:${ports[0]}`);
    } finally {
      child.kill("SIGKILL");
      await new Promise((resolve) => held.close(resolve));
    }
  }, 120_000);

  it("prints its usage", () => {
    const { code, stdout } = run(["kernel", "--help"]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/--jupyter-path DIR/);
    expect(run(["--help"]).stdout).toMatch(/kernel install/);
  });
});

/** A TCP server on a free loopback port. */
function listening(): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve(server));
  });
}
