// Validates Kubernetes objects and Backstage entities with their published validators: the
// @kubernetes-models packages (generated from Argo Workflows', Argo CD's and External Secrets'
// API types) and @backstage/catalog-model (what the Backstage catalog itself runs).
// Reads a JSON array of objects on standard input; prints one line per object; exit 1 on any
// invalid one. The packages are under $RUNNER_TEST_TOOLS/node (scripts/install-test-tools).
import { pathToFileURL } from "node:url";
import path from "node:path";
import { readFileSync } from "node:fs";

const tools = process.env.RUNNER_TEST_TOOLS;
const load = (p) => import(pathToFileURL(path.join(tools, "node", "node_modules", p)).href);

const models = {
  "argoproj.io/v1alpha1/Workflow": ["@kubernetes-models/argo-workflows/argoproj.io/v1alpha1/Workflow.js", "Workflow"],
  "argoproj.io/v1alpha1/WorkflowTemplate": ["@kubernetes-models/argo-workflows/argoproj.io/v1alpha1/WorkflowTemplate.js", "WorkflowTemplate"],
  "argoproj.io/v1alpha1/Application": ["@kubernetes-models/argo-cd/argoproj.io/v1alpha1/Application.js", "Application"],
  "external-secrets.io/v1/ExternalSecret": ["@kubernetes-models/external-secrets/external-secrets.io/v1/ExternalSecret.js", "ExternalSecret"],
  "external-secrets.io/v1/ClusterSecretStore": ["@kubernetes-models/external-secrets/external-secrets.io/v1/ClusterSecretStore.js", "ClusterSecretStore"],
};

const objects = JSON.parse(readFileSync(0, "utf8"));
let failed = 0;
const catalog = await load("@backstage/catalog-model/dist/index.cjs.js");
for (const o of objects) {
  const id = `${o.apiVersion}/${o.kind}`;
  const label = `${id} ${o.metadata && o.metadata.name}`;
  try {
    if (o.apiVersion && o.apiVersion.startsWith("backstage.io/")) {
      const cm = catalog && (catalog.default || catalog);
      const validator = { Resource: cm.resourceEntityV1alpha1Validator, System: cm.systemEntityV1alpha1Validator }[o.kind];
      if (!validator) throw new Error(`no validator for ${o.kind}`);
      if (!(await validator.check(o))) throw new Error("not recognised as its kind");
      await new cm.FieldFormatEntityPolicy().enforce(o);
      await new cm.SchemaValidEntityPolicy().enforce(o);
    } else {
      const model = models[id];
      if (!model) throw new Error(`no validator for ${id}`);
      const mod = await load(model[0]);
      new mod[model[1]](o).validate();
    }
    console.log(`ok ${label}`);
  } catch (e) {
    failed++;
    console.log(`INVALID ${label}: ${e.message}`);
  }
}
process.exit(failed ? 1 : 0);
