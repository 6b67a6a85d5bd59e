package events

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	commonv1 "github.com/payplat/platform/proto-events/gen/payplat/common/v1"
)

// readmePath is the publishers' reference (proto-events/README.md), whose tables and examples must
// follow the code. It is read through a symlink inside this module because go test only tracks
// files under the module root for its result cache: read directly, an edit of the README would
// not re-run this test.
const readmePath = "testdata/proto-events-README.md"

// quoted matches the single-quoted shell arguments of a nats pub example.
var quoted = regexp.MustCompile(`'([^']*)'`)

// readmeSections returns the text of each "#### `<type>`" section of the README by type.
func readmeSections(t *testing.T) (string, map[string]string) {
	t.Helper()
	raw, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatalf("reading the publishers' README: %v", err)
	}
	doc := string(raw)
	sections := map[string]string{}
	parts := strings.Split(doc, "\n#### `")
	for _, p := range parts[1:] {
		typ, body, _ := strings.Cut(p, "`")
		if end := strings.Index(body, "\n### "); end >= 0 {
			body = body[:end]
		}
		if _, dup := sections[typ]; dup {
			t.Errorf("README: two sections for %s", typ)
		}
		sections[typ] = body
	}
	return doc, sections
}

// tableRows returns the cells of the rows of the first field table in text whose first cell is
// a `field`.
func tableRows(text string) [][]string {
	var rows [][]string
	started := false
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "| `") {
			if started {
				break
			}
			continue
		}
		started = true
		rows = append(rows, strings.Split(strings.Trim(line, "| "), " | "))
	}
	return rows
}

func TestReadmeTablesMatchTheContract(t *testing.T) {
	t.Parallel()
	doc, sections := readmeSections(t)
	for _, s := range All() {
		body, ok := sections[s.Type]
		if !ok {
			t.Errorf("README has no section for %s", s.Type)
			continue
		}
		checkTable(t, s.Type, tableRows(body), s.New().ProtoReflect().Descriptor())
		header := "subject `" + s.Family + ".<env>.<company_id>." + s.Name + "`"
		if !strings.Contains(body, header) {
			t.Errorf("README %s: missing %s", s.Type, header)
		}
	}
	for typ := range sections {
		if _, ok := Lookup(typ); !ok {
			t.Errorf("README documents unknown event type %s", typ)
		}
	}
	_, metaTable, _ := strings.Cut(doc, "### 4.1 ")
	rows := tableRows(metaTable)
	fields := new(commonv1.EventMeta).ProtoReflect().Descriptor().Fields()
	if len(rows) != fields.Len() {
		t.Fatalf("README 4.1 has %d metadata rows, EventMeta has %d fields", len(rows), fields.Len())
	}
	for i, row := range rows {
		if row[0] != "`"+string(fields.Get(i).Name())+"`" {
			t.Errorf("README 4.1 row %d is %s, want %s", i, row[0], fields.Get(i).Name())
		}
	}
}

// checkTable compares a README field table with a message: same fields in the same order, and
// for string data fields the required flag and rule of the code.
func checkTable(t *testing.T, typ string, rows [][]string, md protoreflect.MessageDescriptor) {
	t.Helper()
	fields := md.Fields()
	if len(rows) != fields.Len() {
		t.Errorf("README %s: %d table rows for %d fields", typ, len(rows), fields.Len())
		return
	}
	byName := map[protoreflect.Name]fieldRule{}
	for _, fr := range rules[typ].fields {
		byName[fr.name] = fr
	}
	for i, row := range rows {
		fd := fields.Get(i)
		if len(row) != 5 || row[0] != "`"+string(fd.Name())+"`" {
			t.Errorf("README %s: row %d is %q, want field %s", typ, i, row, fd.Name())
			continue
		}
		fr, ok := byName[fd.Name()]
		if !ok {
			continue
		}
		if row[1] != "string" || row[2] != yesNo(fr.required) || row[3] != fr.check.rule {
			t.Errorf("README %s.%s: type %q, required %q, rule %q; want string, %s, %s",
				typ, fd.Name(), row[1], row[2], row[3], yesNo(fr.required), fr.check.rule)
		}
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// TestReadmeExamplesDecode runs every nats pub example of the event reference through Decode, so
// that the examples the publishing teams copy are valid.
func TestReadmeExamplesDecode(t *testing.T) {
	t.Parallel()
	_, sections := readmeSections(t)
	for _, s := range All() {
		body := sections[s.Type]
		_, example, ok := strings.Cut(body, "```sh\nnats pub ")
		if !ok {
			t.Errorf("README %s: no nats pub example", s.Type)
			continue
		}
		example, _, _ = strings.Cut(example, "```")
		args := quoted.FindAllStringSubmatch(example, -1)
		if len(args) != 4 {
			t.Errorf("README %s: example has %d quoted arguments, want headers, subject, payload", s.Type, len(args))
			continue
		}
		if args[0][1] != "Content-Type:application/json" {
			t.Errorf("README %s: first header %q, want Content-Type:application/json", s.Type, args[0][1])
		}
		msgID, ok := strings.CutPrefix(args[1][1], "Nats-Msg-Id:")
		if !ok {
			t.Errorf("README %s: second header %q, want Nats-Msg-Id:<event_id>", s.Type, args[1][1])
		}
		msg, spec, err := Decode(args[2][1], ContentTypeJSON, []byte(args[3][1]))
		if err != nil {
			t.Errorf("README %s: example does not decode: %v", s.Type, err)
			continue
		}
		if spec.Type != s.Type {
			t.Errorf("README %s: example is a %s", s.Type, spec.Type)
		}
		if got := Meta(msg).GetEventId(); got != msgID {
			t.Errorf("README %s: Nats-Msg-Id %q differs from meta.event_id %q", s.Type, msgID, got)
		}
	}
}
