import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { displayUrl, ENV_PROJECT, ENV_URL, teamIndexEnv } from "../src/teamIndexEnv";

describe("team index environment", () => {
  it("is empty without a URL", () => {
    assert.deepEqual(teamIndexEnv("", "acme", "pw"), { env: {} });
  });

  it("puts the stored password into the server's URL only, escaped", () => {
    const got = teamIndexEnv("postgresql://alice@db.example:5432/codecompass?sslmode=require", " acme ", "p@ss:w/rd");
    assert.equal(got.problem, undefined);
    const url = new URL(got.env[ENV_URL]);
    assert.equal(url.username, "alice");
    assert.equal(decodeURIComponent(url.password), "p@ss:w/rd");
    assert.equal(url.searchParams.get("sslmode"), "require");
    assert.equal(got.env[ENV_PROJECT], "acme");
  });

  it("refuses a password written in settings and says where it belongs", () => {
    const got = teamIndexEnv("postgresql://alice:leaked@db/x", "", undefined);
    assert.match(got.problem ?? "", /Set Team Index Password/);
    assert.equal(new URL(got.env[ENV_URL]).password, "");
    assert.ok(!got.env[ENV_URL].includes("leaked"));
  });

  it("rejects what is not a PostgreSQL URL", () => {
    assert.match(teamIndexEnv("mysql://a@b/c", "", undefined).problem ?? "", /postgresql:\/\//);
    assert.match(teamIndexEnv("not a url", "", undefined).problem ?? "", /not a URL/);
  });

  it("never shows a password", () => {
    assert.equal(displayUrl("postgresql://a:secret@h:1/d"), "postgresql://a:***@h:1/d");
  });
});
