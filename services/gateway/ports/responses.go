package ports

import (
	"github.com/payplat/platform/pkg/events"
	"github.com/payplat/platform/services/gateway/domain"
)

// companyResponse is a company as the admin API shows it.
type companyResponse struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	CreatedAt string `json:"created_at"`
}

func newCompanyResponse(c domain.Company) companyResponse {
	return companyResponse{ID: c.ID().String(), Name: c.Name(), CreatedAt: events.FormatTime(c.CreatedAt())}
}
