// The binding may not use the command line.
#pragma once
#include "cli/commands.h"
