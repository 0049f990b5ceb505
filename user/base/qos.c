// SPDX-License-Identifier: Apache-2.0
#include "qos.h"

const char *pod_qos_name(enum pod_qos qos)
{
	switch (qos) {
	case POD_QOS_GUARANTEED:
		return "Guaranteed";
	case POD_QOS_BURSTABLE:
		return "Burstable";
	case POD_QOS_BESTEFFORT:
		return "BestEffort";
	default:
		return "Unknown";
	}
}
