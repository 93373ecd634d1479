/* SPDX-License-Identifier: MIT */
/* Every version of the NCCL net plugin API this project implements. */
#ifndef NCCL_NET_H
#define NCCL_NET_H

#include "net_common.h"
#include "net_v6.h"
#include "net_v7.h"
#include "net_v8.h"
#include "net_v9.h"
#include "net_v10.h"
#include "net_v11.h"
#include "net_v12.h"

#endif
