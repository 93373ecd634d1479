/* SPDX-License-Identifier: MIT */
/* Every version of the NCCL net plugin API this project implements. */
#ifndef NCCL_NET_H
#define NCCL_NET_H

#include "net_common.h"
#include "net_v7.h"

#endif
