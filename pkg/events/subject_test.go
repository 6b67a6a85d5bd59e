package events

import (
	"errors"
	"testing"

	"google.golang.org/protobuf/proto"
)

func TestSubjectForEveryEventTypeParsesBackIntoItsParts(t *testing.T) {
	t.Parallel()
	for _, s := range All() {
		t.Run(s.Type, func(t *testing.T) {
			t.Parallel()
			subject, err := SubjectFor(fixture(s.Type))
			if err != nil {
				t.Fatal(err)
			}
			want := s.Family + ".test." + testCompany + "." + s.Name
			if subject != want || subject != Subject(s.Family, EnvTest, testCompany, s.Name) {
				t.Fatalf("SubjectFor = %q, want %q", subject, want)
			}
			p, err := ParseSubject(subject)
			if err != nil {
				t.Fatal(err)
			}
			wantParts := SubjectParts{Family: s.Family, Env: EnvTest, CompanyID: testCompany, Name: s.Name, Type: s.Type}
			if p != wantParts {
				t.Fatalf("ParseSubject = %+v, want %+v", p, wantParts)
			}
		})
	}
}

func TestParseSubjectSplitsALiveSubjectIntoItsParts(t *testing.T) {
	t.Parallel()
	p, err := ParseSubject("payment.live.3f2a9c1e-0000-4000-8000-000000000001.confirmed")
	if err != nil {
		t.Fatal(err)
	}
	want := SubjectParts{Family: "payment", Env: "live", CompanyID: "3f2a9c1e-0000-4000-8000-000000000001", Name: "confirmed", Type: "payment.confirmed"}
	if p != want {
		t.Fatalf("got %+v, want %+v", p, want)
	}
}

func TestParseSubjectRefusesMalformedSubjectsAndUnknownTypes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		subject string
		unknown bool
	}{
		{name: "empty", subject: ""},
		{name: "three tokens", subject: "payment.test.confirmed"},
		{name: "five tokens", subject: "payment.test.acme.x.confirmed"},
		{name: "empty company", subject: "payment.test..confirmed"},
		{name: "bad env", subject: "payment.prod.acme.confirmed"},
		{name: "wildcard company", subject: "payment.test.*.confirmed"},
		{name: "gt company", subject: "payment.test.>.confirmed"},
		{name: "space in company", subject: "payment.test.ac me.confirmed"},
		{name: "unknown family", subject: "refund.test.acme.created", unknown: true},
		{name: "unknown name", subject: "payment.test.acme.refunded", unknown: true},
		{name: "name of another family", subject: "pool.test.acme.confirmed", unknown: true},
		{name: "dead letter", subject: "deadletter.test.acme.confirmed", unknown: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseSubject(tt.subject)
			if !errors.Is(err, ErrBadSubject) {
				t.Fatalf("ParseSubject(%q) = %v, want ErrBadSubject", tt.subject, err)
			}
			if errors.Is(err, ErrUnknownType) != tt.unknown {
				t.Fatalf("ParseSubject(%q) = %v; wraps ErrUnknownType: %v, want %v", tt.subject, err, !tt.unknown, tt.unknown)
			}
		})
	}
}

func TestSubjectForRefusesBadMetaAndMessagesThatAreNoEvents(t *testing.T) {
	t.Parallel()
	noMeta := fixture(TypePaymentConfirmed)
	noMeta.ProtoReflect().Clear(noMeta.ProtoReflect().Descriptor().Fields().ByName("meta"))
	badCompany := fixture(TypePaymentConfirmed)
	Meta(badCompany).CompanyId = "acme.evil"
	badEnv := fixture(TypePaymentConfirmed)
	Meta(badEnv).Environment = "prod"

	tests := []struct {
		name string
		msg  proto.Message
		want error
	}{
		{name: "no meta", msg: noMeta, want: ErrBadSubject},
		{name: "bad company", msg: badCompany, want: ErrBadSubject},
		{name: "bad env", msg: badEnv, want: ErrBadSubject},
		{name: "not an event", msg: Meta(fixture(TypePaymentConfirmed)), want: ErrUnknownType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if subject, err := SubjectFor(tt.msg); !errors.Is(err, tt.want) {
				t.Fatalf("SubjectFor = %q, %v; want %v", subject, err, tt.want)
			}
		})
	}
}

// A token is what one place of a subject can hold: an id, never a separator, a wildcard, a
// space or a control character (in ASCII or beyond it).
func TestIsTokenRefusesSeparatorsWildcardsSpacesAndControls(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"test", "3f2a9c1e-0000-4000-8000-000000000001", "société"} {
		if !IsToken(ok) {
			t.Errorf("IsToken(%q) = false, want true", ok)
		}
	}
	for _, bad := range []string{"", "a.b", "a*", ">", "a b", "a\tb", "a\nb", "a\x00b", "a\x7fb", "a\u00a0b", "a\u2028b"} {
		if IsToken(bad) {
			t.Errorf("IsToken(%q) = true, want false", bad)
		}
	}
}
