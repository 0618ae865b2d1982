package catalog

import (
	"slices"
	"strings"
)

// geographies returns the inference profile prefixes that serve a Bedrock
// region, best first: its own geography, then "global". Japan's and
// Australia's regions have their own profiles for some models and belong
// to Asia Pacific's for others.
func geographies(region string) []string {
	switch {
	case region == "":
		return []string{"global"}
	case strings.HasPrefix(region, "us-gov-"):
		return []string{"us-gov"} // GovCloud: no global profile
	case strings.HasPrefix(region, "us-"):
		return []string{"us", "global"}
	case strings.HasPrefix(region, "eu-"):
		return []string{"eu", "global"}
	case region == "ap-northeast-1" || region == "ap-northeast-3":
		return []string{"jp", "apac", "global"}
	case region == "ap-southeast-2" || region == "ap-southeast-4":
		return []string{"au", "apac", "global"}
	case strings.HasPrefix(region, "ap-"):
		return []string{"apac", "global"}
	}
	return []string{"global"}
}

// profile returns the id of the offer's inference profile for region.
func profile(o Offer, region string) (string, bool) {
	for _, g := range geographies(region) {
		if slices.Contains(o.Profiles, g) {
			return g + "." + o.ID, true
		}
	}
	return "", false
}
