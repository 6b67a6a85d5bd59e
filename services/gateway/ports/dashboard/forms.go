package dashboard

// amountField is what the shared "amount-field" partial needs to render a USDC amount input
// with its error, so that every form asking for an amount looks and reads the same.
type amountField struct {
	ID    string
	Value string
	Error string
}

// AmountField returns the amount input with element id, showing what the person typed
// (else def) and the field's error.
func (v view) AmountField(id, def string) amountField {
	return amountField{ID: id, Value: v.Value("amount", def), Error: v.FieldError("amount")}
}

// filterForm is the data of the shared "filter" partial: one select that narrows a list by a
// query parameter, submitted with GET so that the filtered page can be linked.
type filterForm struct {
	// Action is the list page the form reloads.
	Action string
	// ID is the select's element id; Name its query parameter.
	ID, Name string
	Label    string
	// All labels the empty option, which removes the filter.
	All      string
	Options  []string
	Selected string
}

// Filter is the payments list's status filter.
func (v paymentsView) Filter() filterForm {
	return filterForm{Action: Prefix + "/payments", ID: "status", Name: "status", Label: "Status",
		All: "All statuses", Options: v.Statuses, Selected: v.Status}
}

// Filter is the delivery log's status filter.
func (v webhooksView) Filter() filterForm {
	return filterForm{Action: Prefix + "/webhooks", ID: "log-status", Name: "status", Label: "Status",
		All: "All statuses", Options: v.Statuses, Selected: v.Status}
}

// Filter is the pool movements' type filter.
func (v poolView) Filter() filterForm {
	return filterForm{Action: Prefix + "/pool", ID: "type", Name: "type", Label: "Type",
		All: "All types", Options: v.Types, Selected: v.Type}
}
