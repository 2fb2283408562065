// Plots drawn by gnuplot: a generated script and its data file are kept beside the image
// (OUT.svg -> OUT.gp, OUT.dat) so a user can re-plot, and all three are written atomically.
#pragma once

#include <cstdint>
#include <string>

namespace remat {

enum class ImageFormat { kSvg, kPng };

// From the extension of `image_path` (".svg" or ".png", any case); UsageError otherwise.
ImageFormat ImageFormatOf(const std::string& image_path);

// The files behind a plot: OUT.svg -> OUT.dat and OUT.gp (the extension is replaced).
struct PlotFiles {
  std::string image;
  std::string data;
  std::string script;
};
PlotFiles PlotFilesFor(const std::string& image_path);

// The gnuplot executable found on PATH; InputError (exit 3) saying how to install it when
// there is none. Commands call it before long work so that a missing gnuplot fails fast.
std::string FindGnuplot();

// A unit for an axis of bytes: the largest binary unit that keeps the values at or above 1.
struct ByteUnit {
  std::string name;  // "B", "KiB", "MiB", "GiB", "TiB"
  double bytes = 1;  // bytes per unit
};
ByteUnit ByteUnitFor(int64_t max_bytes);

// Text quoted for a gnuplot single-quoted string ('' stands for one quote).
std::string GnuplotQuote(const std::string& text);

struct PlotSpec {
  std::string image_path;  // .svg or .png
  std::string title;       // first comment line of the script and data file
  int32_t width_px = 960;
  int32_t height_px = 600;
  std::string data;  // the data file's text
  // gnuplot commands after the terminal is set; they read the data through the string
  // variable `datafile` (e.g. "plot datafile index 0 using 1:2 with lines").
  std::string commands;
};

// Writes OUT.dat and OUT.gp, runs gnuplot on them in the image's folder and writes the image.
// Every file goes to a temporary name first and is renamed only when gnuplot succeeded, so a
// failure leaves no partial or stale file. InputError when gnuplot is missing, the folder is
// not writable, or gnuplot fails (with the tail of its messages).
void RenderPlot(const PlotSpec& spec);

}  // namespace remat
