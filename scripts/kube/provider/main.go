// The Pulumi Kubernetes provider's plugin, built by scripts/install-kube-tools. The provider's own
// command embeds two files its `go generate` writes (the schema with its version set, and the
// Terraform mapping); the install script writes them beside this file in a scratch copy of this
// module, then builds it.
package main

import (
	_ "embed"

	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/provider"
	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version"
)

//go:embed schema-embed.json
var schema []byte

//go:embed terraform-mapping-embed.json
var terraformMapping []byte

func main() {
	provider.Serve("kubernetes", version.Version, schema, terraformMapping)
}
