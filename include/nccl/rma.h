/* SPDX-License-Identifier: MIT */
/* Every version of the NCCL RMA plugin API this project implements. */
#ifndef NCCL_RMA_H
#define NCCL_RMA_H

#include "rma_v14.h"
#include "rma_v15.h"
#include "rma_v16.h"

#endif
