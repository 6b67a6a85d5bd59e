// Module proto-events holds the event contract of the bus: the protobuf schemas (proto/) and the
// Go code generated from them (gen/). See README.md. The google.golang.org/protobuf runtime must
// be at least the version of protoc-gen-go pinned in tools/go.mod, and the vtprotobuf runtime
// (github.com/planetscale/vtprotobuf) the version of protoc-gen-go-vtproto pinned there.
module github.com/payplat/platform/proto-events

go 1.26

require (
	github.com/planetscale/vtprotobuf v0.6.0
	google.golang.org/protobuf v1.36.12
)
