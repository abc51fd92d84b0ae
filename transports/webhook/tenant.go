package webhook

import (
	"crypto/sha256"
	"encoding/hex"
)

// Tenants. An endpoint may belong to one tenant (Endpoint.TenantID): it then receives
// that tenant's events only, and its deliveries are that tenant's. Tenant-scoped callers
// (a tenant's token on the admin API) list with Page.TenantID and
// DeliveryFilter.TenantID, which the queries apply themselves: endpoints by their
// tenant_id column, deliveries by a tag the fan-out puts on each delivery job.

// deliveryTags are the ledger tags of a delivery to ep: its endpoint id, and its
// tenant's tag when the endpoint has a tenant.
func deliveryTags(ep *Endpoint) []string {
	if ep.TenantID == "" {
		return []string{ep.ID}
	}
	return []string{ep.ID, tenantTag(ep.TenantID)}
}

// filterTags are the tags every listed delivery must carry.
func filterTags(endpointID, tenantID string) []string {
	var tags []string
	if endpointID != "" {
		tags = append(tags, endpointID)
	}
	if tenantID != "" {
		tags = append(tags, tenantTag(tenantID))
	}
	return tags
}

// tenantTag names a tenant in River's tag alphabet (word characters and dashes, at
// most 255): tenant ids may hold any printable text, so the tag is a hash of the id,
// 96 bits, enough that two tenants never share one. The listing compares the decoded
// tenant too, so even a collision would not leak a delivery.
func tenantTag(tenant string) string {
	sum := sha256.Sum256([]byte(tenant))
	return "tenant_" + hex.EncodeToString(sum[:12])
}
