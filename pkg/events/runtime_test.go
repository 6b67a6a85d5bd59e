package events

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
)

// pseudoVersion matches a Go pseudo-version (v1.2.4-0.20260101000000-abcdef123456 and its other
// forms): a build from an untagged commit.
var pseudoVersion = regexp.MustCompile(`\d{14}-[0-9a-f]{12}$`)

// The protobuf runtime every module builds with, and the protoc-gen-go that wrote
// proto-events/gen, are a tagged release (issue 16): an untagged commit has had no release
// review, and a later `go get` cannot tell which fixes it holds.
func TestProtobufIsATaggedRelease(t *testing.T) {
	t.Parallel()
	info, ok := debug.ReadBuildInfo()
	if !ok {
		t.Fatal("no build information in the test binary")
	}
	for _, dep := range info.Deps {
		if dep.Path == "google.golang.org/protobuf" && pseudoVersion.MatchString(dep.Version) {
			t.Errorf("the test binary links google.golang.org/protobuf %s, an untagged commit", dep.Version)
		}
	}
	root := filepath.Join("..", "..")
	requirement := regexp.MustCompile(`(?m)^\s*(?:require\s+)?google\.golang\.org/protobuf\s+(\S+)`)
	generator := regexp.MustCompile(`(?m)^// \tprotoc-gen-go (\S+)$`)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		var re *regexp.Regexp
		switch {
		case d.Name() == "go.mod":
			re = requirement
		case strings.HasSuffix(path, ".pb.go") && !strings.HasSuffix(path, "_vtproto.pb.go"):
			re = generator
		default:
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range re.FindAllStringSubmatch(string(data), -1) {
			if pseudoVersion.MatchString(m[1]) || strings.HasSuffix(m[1], "-devel") {
				t.Errorf("%s: google.golang.org/protobuf %s is not a tagged release", path, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
