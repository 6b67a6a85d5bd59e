package adapters

import (
	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/pkg/eventstore"
	"github.com/payplat/platform/services/merchant/domain"
)

func decodeRecorded(rec eventstore.Recorded) (domain.Event, error) {
	msg, _, err := events.Decode(rec.Subject, events.ContentTypeProtobuf, rec.Payload)
	if err != nil {
		return nil, err
	}
	return Decode(msg)
}
