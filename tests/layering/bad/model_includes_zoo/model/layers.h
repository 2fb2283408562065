// model may not use zoo: the networks are built on the model layer, not under it.
#pragma once
#include "zoo/networks.h"
