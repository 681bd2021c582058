/**
 * The part of the NLM's UCUM library (`@lhncbc/ucum-lhc`, which ships no types) that units.ts uses, as its
 * README documents it.
 */
declare module '@lhncbc/ucum-lhc' {
  interface UcumUnit {
    code: string;
    name: string;
    guidance: string | null;
  }

  interface UnitValidation {
    status: 'valid' | 'invalid' | 'error';
    /** The valid UCUM code, or null. */
    ucumCode: string | null;
    msg: string[];
    unit: UcumUnit | null;
  }

  interface UnitConversion {
    status: 'succeeded' | 'failed' | 'error';
    /** The converted value, unrounded, or null. */
    toVal: number | null;
    msg: string[];
  }

  interface ConversionOptions {
    suggestions?: boolean;
    /** g/mol, for a conversion between mass and moles. */
    molecularWeight?: number;
    charge?: number;
  }

  class UcumLhcUtils {
    static getInstance(): UcumLhcUtils;
    validateUnitString(unit: string, suggest?: boolean): UnitValidation;
    convertUnitTo(fromUnit: string, fromValue: number, toUnit: string, options?: ConversionOptions): UnitConversion;
  }
}
