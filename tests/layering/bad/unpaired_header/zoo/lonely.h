// A header without its source file.
#pragma once
int Lonely();
