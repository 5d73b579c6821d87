/** Seattle's daily weather (vega-datasets 3.2.1) as notebook 05 reads it: tomorrow's maximum from today's weather and the season. */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export type Day = {
  date: string;
  temp_max: number;
  temp_min: number;
  precipitation: number;
  wind: number;
  season_cos: number;
  season_sin: number;
  tomorrow_max: number;
};

export const ATTRIBUTES = ["temp_max", "temp_min", "precipitation", "wind", "season_cos", "season_sin"];

/** Every day but the last, with the next day's maximum as the outcome. */
export function weatherDays(): Day[] {
  const file = fileURLToPath(new URL("../../node_modules/vega-datasets/data/seattle-weather.csv", import.meta.url));
  const lines = readFileSync(file, "utf8").trim().split("\n");
  const days = lines.slice(1).map((line) => {
    const [date, precipitation, temp_max, temp_min, wind] = line.split(",");
    return { date, precipitation: Number(precipitation), temp_max: Number(temp_max), temp_min: Number(temp_min), wind: Number(wind) };
  });
  return days.slice(0, -1).map((d, i) => {
    const angle = (2 * Math.PI * (Date.parse(d.date) - Date.parse(d.date.slice(0, 4)))) / (365.25 * 86_400_000);
    return { ...d, season_cos: Math.cos(angle), season_sin: Math.sin(angle), tomorrow_max: days[i + 1].temp_max };
  });
}
