// Nothing to compile: this target only exports FuzzDriver.h to the fuzz targets.
#include "FuzzDriver.h"
