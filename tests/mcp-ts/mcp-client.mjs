// A client nobody here wrote: the official MCP TypeScript SDK drives engram's MCP
// server over both transports, stdio (it spawns `engram mcp`) and streamable HTTP
// (/mcp on a running engram). cmd/engram's TestMCPTypeScriptSDK starts a real engram
// and runs this file with node's test runner; it needs
//   ENGRAM_URL        the running engram, e.g. http://127.0.0.1:8080
//   ENGRAM_TOKEN      an API token of a tenant
//   ENGRAM_MCP_COMMAND the engram binary to spawn for stdio (ENGRAM_MCP_ARGS: a JSON
//                     array of its arguments, default ["mcp"]; ENGRAM_MCP_ENV: a JSON
//                     object of extra environment variables)
import { test } from "node:test";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};
const url = env("ENGRAM_URL");
const token = env("ENGRAM_TOKEN");

const wantTools = ["add_turns", "forget", "get_context", "memory_history", "remember", "search_memory", "task_state_get", "task_state_set"];

const transports = {
  stdio: () =>
    new StdioClientTransport({
      command: env("ENGRAM_MCP_COMMAND"),
      args: JSON.parse(process.env.ENGRAM_MCP_ARGS ?? '["mcp"]'),
      env: { ...getDefaultEnvironment(), ...JSON.parse(process.env.ENGRAM_MCP_ENV ?? "{}"), ENGRAM_URL: url, ENGRAM_TOKEN: token },
      stderr: "inherit",
    }),
  "streamable HTTP": () =>
    new StreamableHTTPClientTransport(new URL("/mcp", url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
};

// callTool calls a tool and returns its structured result, failing on a tool error.
async function callTool(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  const text = (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("");
  assert.ok(!res.isError, `${name}: tool error: ${text}`);
  assert.ok(res.structuredContent, `${name}: no structured content`);
  return { out: res.structuredContent, text };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

for (const [name, make] of Object.entries(transports)) {
  test(`MCP over ${name}`, async () => {
    const client = new Client({ name: "engram-mcp-ts-test", version: "1.0.0" });
    await client.connect(make());
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), wantTools);
      for (const t of tools) {
        assert.ok(t.description && t.description.length > 80, `${t.name}: description ${t.description}`);
        assert.equal(t.inputSchema.type, "object", `${t.name}: input schema`);
      }

      const user = `ts-${name.replace(/\W/g, "")}-${process.pid}`;
      const { out: rem } = await callTool(client, "remember", {
        user_id: user,
        content: "The user keeps a sourdough starter named Bubbles",
        category: "fact",
      });
      assert.ok(rem.candidate_id, "remember: no candidate_id");

      // Resolution is asynchronous (about a second): poll, bounded, until search finds it.
      let hit;
      for (let i = 0; i < 120 && !hit; i++) {
        const { out } = await callTool(client, "search_memory", { query: "sourdough starter", user_id: user });
        hit = out.results.find((r) => r.content.includes("sourdough"));
        if (!hit) await sleep(250);
      }
      assert.ok(hit, "search_memory never found the remembered memory");

      const { out: ctx, text } = await callTool(client, "get_context", {
        query: "What is the name of my sourdough starter?",
        user_id: user,
      });
      assert.ok(ctx.text.includes(`[memory_ref: ${hit.id}]`), `get_context does not cite ${hit.id}:\n${ctx.text}`);
      assert.ok(ctx.memory_ids.includes(hit.id), `memory_ids ${ctx.memory_ids} lack ${hit.id}`);
      assert.equal(text, ctx.text, "the text content is the context block");

      // A bad argument is a tool error that names the field, not a protocol failure.
      const bad = await client.callTool({ name: "forget", arguments: { memory_id: "not-a-uuid" } });
      assert.ok(bad.isError, "forget of a non-UUID succeeded");
    } finally {
      await client.close();
    }
  });
}
