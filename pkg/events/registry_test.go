package events

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
)

func TestTheRegistryFindsEachOfItsTypesAndHandsOutACopy(t *testing.T) {
	t.Parallel()
	all := All()
	if len(all) != 23 {
		t.Fatalf("All() has %d specs, want 23", len(all))
	}
	catalogue := 0
	for _, s := range all {
		if s.Type != s.Family+"."+s.Name {
			t.Errorf("%s: type is not family.name (%s, %s)", s.Type, s.Family, s.Name)
		}
		if got, ok := Lookup(s.Type); !ok || got.Type != s.Type {
			t.Errorf("Lookup(%q) = %v, %v", s.Type, got.Type, ok)
		}
		if got, ok := ForMessage(s.New()); !ok || got.Type != s.Type {
			t.Errorf("ForMessage(%s) = %v, %v", s.Type, got.Type, ok)
		}
		if _, ok := StreamFor(s.Family); !ok {
			t.Errorf("%s: no stream for family %q", s.Type, s.Family)
		}
		if s.Catalogue {
			catalogue++
		}
	}
	if catalogue != 12 {
		t.Errorf("%d catalogue events, want the 12 of SPEC 6.4", catalogue)
	}
	if _, ok := Lookup("payment.refunded"); ok {
		t.Error("Lookup of an unknown type succeeded")
	}
	if _, ok := ForMessage(nil); ok {
		t.Error("ForMessage(nil) succeeded")
	}
	all[0].Type = "changed"
	if All()[0].Type == "changed" {
		t.Error("All returns the registry itself, not a copy")
	}
}

// TestEveryMessageHasMeta checks the shape every event message must have: meta as field 1.
func TestEveryMessageHasMeta(t *testing.T) {
	t.Parallel()
	for _, s := range All() {
		fd := s.New().ProtoReflect().Descriptor().Fields().ByNumber(1)
		if fd == nil || fd.Name() != "meta" || fd.Message() == nil || fd.Message().FullName() != "payplat.common.v1.EventMeta" {
			t.Errorf("%s: field 1 is not `payplat.common.v1.EventMeta meta`", s.Type)
		}
		if Meta(fixture(s.Type)) == nil {
			t.Errorf("%s: Meta() of the fixture is nil", s.Type)
		}
	}
}

// TestRulesCoverEveryField checks that every string data field of every event has exactly one
// validation rule, and that every rule names a string field.
func TestRulesCoverEveryField(t *testing.T) {
	t.Parallel()
	if len(rules) != len(All()) {
		t.Errorf("%d rule sets for %d types", len(rules), len(All()))
	}
	for _, s := range All() {
		r, ok := rules[s.Type]
		if !ok {
			t.Errorf("%s: no rules", s.Type)
			continue
		}
		fields := s.New().ProtoReflect().Descriptor().Fields()
		seen := map[protoreflect.Name]bool{}
		for _, fr := range r.fields {
			fd := fields.ByName(fr.name)
			switch {
			case fd == nil:
				t.Errorf("%s: rule for unknown field %q", s.Type, fr.name)
			case fd.Kind() != protoreflect.StringKind:
				t.Errorf("%s: rule for non-string field %q", s.Type, fr.name)
			case seen[fr.name]:
				t.Errorf("%s: two rules for %q", s.Type, fr.name)
			case fr.check.fn == nil || fr.check.rule == "":
				t.Errorf("%s: rule for %q has no check", s.Type, fr.name)
			}
			seen[fr.name] = true
		}
		for i := range fields.Len() {
			fd := fields.Get(i)
			if fd.Kind() == protoreflect.StringKind && !seen[fd.Name()] {
				t.Errorf("%s: string field %q has no rule", s.Type, fd.Name())
			}
		}
	}
}

func TestEachStreamTakesItsFamilysSubjectsUnderAnUpperCaseName(t *testing.T) {
	t.Parallel()
	for _, st := range Streams() {
		if st.Subjects != st.Family+".>" || st.Name == "" || st.Name != strings.ToUpper(st.Name) {
			t.Errorf("stream %+v", st)
		}
	}
	if _, ok := StreamFor("deadletter"); ok {
		t.Error("StreamFor(deadletter) should not be a family stream")
	}
}
