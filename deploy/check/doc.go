// Package check holds the offline checks of the deployment files (deploy/ and
// docker-compose.yml); see manifests_test.go.
package check
