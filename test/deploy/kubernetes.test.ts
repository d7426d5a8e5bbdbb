/**
 * The example Kubernetes manifests of `deploy/kubernetes/`: every object is valid against the
 * Kubernetes schemas (`kubernetes-models`; KEDA's ScaledObject and TriggerAuthentication
 * against KEDA's CRD schemas, `@kubernetes-models/keda`: types and required fields; fields
 * they do not know pass), and the manifests agree with the
 * code: each role's probes are the endpoints it serves, the scalers read the BullMQ lists the
 * queues really use, and every Secret and ConfigMap key they name exists.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ScaledObject, TriggerAuthentication } from "@kubernetes-models/keda/keda.sh/v1alpha1";
import { clusterKeys } from "@yiem/core";
import { Deployment } from "kubernetes-models/apps/v1";
import { ConfigMap, Secret, Service } from "kubernetes-models/v1";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { repoRoot } from "../support/processes.js";

// biome-ignore lint/suspicious/noExplicitAny: manifests are read field by field
type Manifest = Record<string, any>;

/** The model class of each kind the examples use (each validates against its schema). */
/** A model class: built from an object of its kind, it validates it. */
type ModelClass = new (data: never) => { validate(): void };

const MODELS: Record<string, ModelClass> = {
  "apps/v1 Deployment": Deployment,
  "v1 Service": Service,
  "v1 ConfigMap": ConfigMap,
  "v1 Secret": Secret,
  "keda.sh/v1alpha1 ScaledObject": ScaledObject,
  "keda.sh/v1alpha1 TriggerAuthentication": TriggerAuthentication,
};

const folder = join(repoRoot, "deploy/kubernetes");
const manifests: Manifest[] = readdirSync(folder)
  .filter((name) => name.endsWith(".yaml"))
  .flatMap((name) =>
    parseAllDocuments(readFileSync(join(folder, name), "utf8")).map((doc) => {
      if (doc.errors.length > 0) throw new Error(`${name}: ${doc.errors[0]?.message}`);
      return doc.toJS() as Manifest;
    }),
  );

const ofKind = (kind: string) => manifests.filter((m) => m.kind === kind);
const deployment = (name: string) =>
  ofKind("Deployment").find((m) => m.metadata.name === `yiem-${name}`) as Manifest;

/** Validates `manifest` with its kind's model; throws naming the field at fault. */
function validate(manifest: Manifest): void {
  const Model = MODELS[`${manifest.apiVersion} ${manifest.kind}`];
  if (!Model) throw new Error(`no schema for ${manifest.apiVersion} ${manifest.kind}`);
  new (Model as unknown as new (data: Manifest) => { validate(): void })(manifest).validate();
}

describe("the example Kubernetes manifests", () => {
  it("are valid Kubernetes and KEDA objects, one Deployment per role", () => {
    expect(manifests.length).toBeGreaterThan(0);
    for (const manifest of manifests) expect(() => validate(manifest)).not.toThrow();
    const roles = ofKind("Deployment")
      .map((m) => m.metadata.name)
      .sort();
    expect(roles).toEqual(["yiem-coordinator", "yiem-gateway", "yiem-tool-worker"]);
  });

  it("are checked for real: a wrong type or a missing required field fails validation", () => {
    // (kubernetes-models' schemas allow fields they do not know, so a misspelt optional
    // field passes here: `kubectl apply --validate=strict` is the check for those.)
    const wrongType = structuredClone(deployment("gateway"));
    wrongType.spec.replicas = "two";
    expect(() => validate(wrongType)).toThrow();
    const unnamed = structuredClone(deployment("tool-worker"));
    delete unnamed.spec.template.spec.containers[0].name;
    expect(() => validate(unnamed)).toThrow();
    const noTarget = structuredClone(ofKind("ScaledObject")[0] as Manifest);
    delete noTarget.spec.scaleTargetRef;
    expect(() => validate(noTarget)).toThrow();
  });

  it("probe each role on its /healthz and /readyz, on a port it declares", () => {
    for (const role of ["coordinator", "tool-worker", "gateway"]) {
      const [container] = deployment(role).spec.template.spec.containers;
      const ports = container.ports.map((p: Manifest) => p.name);
      expect(container.livenessProbe.httpGet.path, role).toBe("/healthz");
      expect(container.readinessProbe.httpGet.path, role).toBe("/readyz");
      expect(ports, role).toContain(container.livenessProbe.httpGet.port);
      expect(ports, role).toContain(container.readinessProbe.httpGet.port);
    }
    const env = (role: string) =>
      Object.fromEntries(
        deployment(role).spec.template.spec.containers[0].env.map((e: Manifest) => [
          e.name,
          e.value,
        ]),
      );
    expect(env("gateway").GATEWAY_OPS_PORT).toBe("9464");
    expect(env("tool-worker").WORKER_PORT).toBe("9100");
    expect(env("coordinator").YIEM_ADMIN_HOST).toBe("0.0.0.0");
  });

  it("scale on the BullMQ wait lists the queues really use", () => {
    const config = ofKind("ConfigMap")[0] as Manifest;
    const keys = clusterKeys(config.data.YIEM_PREFIX);
    const lists = Object.fromEntries(
      ofKind("ScaledObject").map((m) => [
        m.spec.scaleTargetRef.name,
        m.spec.triggers[0].metadata.listName,
      ]),
    );
    expect(lists).toEqual({
      "yiem-coordinator": `${keys.bullPrefix}:${keys.coordinatorQueue}:wait`,
      "yiem-tool-worker": `${keys.bullPrefix}:${keys.toolQueues("default")[0]}:wait`,
    });
    const auths = ofKind("TriggerAuthentication").map((m) => m.metadata.name);
    for (const scaled of ofKind("ScaledObject"))
      expect(auths).toContain(scaled.spec.triggers[0].authenticationRef.name);
  });

  it("name only Secret and ConfigMap keys that exist", () => {
    const secret = ofKind("Secret")[0] as Manifest;
    const config = ofKind("ConfigMap")[0] as Manifest;
    const secretKeys = Object.keys(secret.stringData);
    const named = JSON.stringify(manifests);
    for (const [, key] of named.matchAll(
      /"secretKeyRef":\{"name":"yiem-secrets","key":"([^"]+)"\}/g,
    ))
      expect(secretKeys).toContain(key);
    for (const auth of ofKind("TriggerAuthentication"))
      for (const ref of auth.spec.secretTargetRef) expect(secretKeys).toContain(ref.key);
    for (const role of ["coordinator", "tool-worker", "gateway"]) {
      for (const volume of deployment(role).spec.template.spec.volumes ?? []) {
        const items = volume.configMap?.items ?? volume.secret?.items ?? [];
        const source = volume.configMap ? Object.keys(config.data) : secretKeys;
        for (const item of items) expect(source, role).toContain(item.key);
      }
    }
  });
});
